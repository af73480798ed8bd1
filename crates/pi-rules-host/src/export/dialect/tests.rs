use super::*;

fn pats(d: Dialect, dir: &str, glob: &str) -> Vec<String> {
    translate(d, dir, glob).patterns
}

#[test]
fn the_issue_s_examples() {
    for d in [
        Dialect::Copilot,
        Dialect::Cursor,
        Dialect::Windsurf,
        Dialect::Kiro,
        Dialect::Cline,
    ] {
        assert_eq!(pats(d, "", "*.ts"), ["**/*.ts"], "{d:?}");
        assert_eq!(pats(d, "", "src/api/**"), ["src/api/**"], "{d:?}");
    }
    assert_eq!(pats(Dialect::Claude, "", "*.ts"), ["/**/*.ts"]);
    assert_eq!(pats(Dialect::Claude, "", "src/api/**"), ["/src/api/**"]);
}
