use super::*;

#[test]
fn a_rule_of_the_root_with_no_glob_is_unscoped() {
    let rule = ScopedRule {
        name: "50-api",
        dir: "",
        globs: &[],
        text: "text\n",
    };
    for target in Target::ALL {
        assert_eq!(place(target, &rule).placement, Placement::Unscoped);
    }
}
