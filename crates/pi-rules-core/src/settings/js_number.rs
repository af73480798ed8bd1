//! JavaScript's lenient number readers, which the reference applies to environment variables:
//! `parseInt(s, 10)` and `parseFloat(s)`. Both skip leading whitespace (JavaScript's set) and read
//! the longest prefix that is a number; both give NaN when there is none.

use crate::text::js_trim_start;

/// JavaScript `parseInt(s, 10)`: `"8080abc"` is 8080, `" 9000"` is 9000, `"-5"` is -5,
/// `"x"` is NaN.
pub fn parse_int(s: &str) -> f64 {
    let (negative, rest) = split_sign(js_trim_start(s));
    let digits = ascii_digits(rest);
    if digits == 0 {
        return f64::NAN;
    }
    // Only ASCII digits: `f64::from_str` reads them, correctly rounded, however many there are.
    let magnitude: f64 = rest[..digits].parse().unwrap_or(f64::NAN);
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// JavaScript `parseFloat(s)`: `"3abc"` is 3, `".5"` is 0.5, `"1e2"` is 100, `"1e"` is 1,
/// `"Infinity"` is infinite, `"inf"` is NaN.
pub fn parse_float(s: &str) -> f64 {
    let (negative, rest) = split_sign(js_trim_start(s));
    let magnitude = if rest.starts_with("Infinity") {
        f64::INFINITY
    } else {
        decimal_prefix(rest)
    };
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// The value of the longest prefix of `s` matching `\d*(\.\d*)?([eE][+-]?\d+)?` with at least
/// one digit before the exponent, or NaN.
fn decimal_prefix(s: &str) -> f64 {
    let bytes = s.as_bytes();
    let int_digits = ascii_digits(s);
    let mut end = int_digits;
    let mut frac_digits = 0;
    if bytes.get(end) == Some(&b'.') {
        frac_digits = ascii_digits(&s[end + 1..]);
        end += 1 + frac_digits;
    }
    if int_digits + frac_digits == 0 {
        return f64::NAN;
    }
    let mantissa_end = end;
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let mut exp = end + 1;
        if matches!(bytes.get(exp), Some(b'+' | b'-')) {
            exp += 1;
        }
        let exp_digits = ascii_digits(&s[exp..]);
        if exp_digits > 0 {
            end = exp + exp_digits;
        }
    }
    // Rebuild as `I.F` plus the exponent so that forms like `5.` and `.5` read the same
    // everywhere; the text is ASCII digits, so the parse cannot fail.
    let mut text = String::with_capacity(end + 2);
    text.push_str(if int_digits == 0 {
        "0"
    } else {
        &s[..int_digits]
    });
    text.push('.');
    let frac = &s[int_digits..mantissa_end];
    let frac = frac.strip_prefix('.').unwrap_or(frac);
    text.push_str(if frac.is_empty() { "0" } else { frac });
    text.push_str(&s[mantissa_end..end]);
    text.parse().unwrap_or(f64::NAN)
}

fn split_sign(s: &str) -> (bool, &str) {
    match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    }
}

/// How many ASCII digits `s` starts with.
fn ascii_digits(s: &str) -> usize {
    s.bytes().take_while(u8::is_ascii_digit).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(a: f64, b: f64) -> bool {
        (a.is_nan() && b.is_nan()) || (a == b && a.is_sign_negative() == b.is_sign_negative())
    }

    #[test]
    fn parse_int_table() {
        let cases = [
            ("8080", 8080.0),
            ("8080abc", 8080.0),
            (" 9000", 9000.0),
            ("\u{feff}\u{a0}\n42", 42.0),
            ("+7", 7.0),
            ("-5", -5.0),
            ("-0", -0.0),
            ("007", 7.0),
            ("3.9", 3.0),
            ("1e3", 1.0),
            ("0x10", 0.0),
            ("", f64::NAN),
            ("abc", f64::NAN),
            ("-", f64::NAN),
            ("+-1", f64::NAN),
            ("\u{85}1", f64::NAN),
            ("99999999999999999999999", 1e23),
        ];
        for (input, expected) in cases {
            let got = parse_int(input);
            assert!(
                same(got, expected),
                "parseInt({input:?}) = {got}, want {expected}"
            );
        }
    }

    #[test]
    fn parse_float_table() {
        let cases = [
            ("2.5", 2.5),
            ("3abc", 3.0),
            ("1e2", 100.0),
            ("1E+2x", 100.0),
            ("1e-2", 0.01),
            ("1e", 1.0),
            ("1e+", 1.0),
            (".5", 0.5),
            ("5.", 5.0),
            ("-.5e1", -5.0),
            ("  -1", -1.0),
            ("-0", -0.0),
            ("Infinity", f64::INFINITY),
            ("-Infinityx", f64::NEG_INFINITY),
            ("+Infinity", f64::INFINITY),
            ("inf", f64::NAN),
            ("infinity", f64::NAN),
            ("1e400", f64::INFINITY),
            (".", f64::NAN),
            ("-.", f64::NAN),
            ("e5", f64::NAN),
            ("", f64::NAN),
            ("0x1A", 0.0),
            ("1_000", 1.0),
        ];
        for (input, expected) in cases {
            let got = parse_float(input);
            assert!(
                same(got, expected),
                "parseFloat({input:?}) = {got}, want {expected}"
            );
        }
    }
}
