//! A candidate's template against its parent's, line by line, as `lineage.json` shows it:
//! a unified diff's body (`-` a line only the parent has, `+` one only the child has, a
//! space one both have), from a longest common subsequence of their lines.

/// The lines of `child` against `parent`; empty where they are the same text.
pub fn diff(parent: &str, child: &str) -> String {
    if parent == child {
        return String::new();
    }
    let (a, b): (Vec<&str>, Vec<&str>) = (parent.lines().collect(), child.lines().collect());
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut out = String::new();
    let mut line = |mark: char, text: &str| {
        out.push(mark);
        out.push_str(text);
        out.push('\n');
    };
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            line(' ', a[i]);
            (i, j) = (i + 1, j + 1);
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] > lcs[i + 1][j]) {
            line('+', b[j]);
            j += 1;
        } else {
            line('-', a[i]);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::diff;

    #[test]
    fn lines_only_one_side_has_are_marked() {
        assert_eq!(diff("a\nb\n", "a\nb\n"), "");
        assert_eq!(
            diff("keep\nold\nend", "keep\nnew\nend"),
            " keep\n-old\n+new\n end\n"
        );
        assert_eq!(diff("", "x"), "+x\n");
        assert_eq!(diff("x\ny", "y"), "-x\n y\n");
    }
}
