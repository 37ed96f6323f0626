//! A file's string literals, kept apart from its text: the evidence gates that look for words
//! in strings read them here, so the text itself need not stay in memory once the file is
//! outlined.

/// The string literals of one file (quotes included), in order.
#[derive(Debug, Default, Hash)]
pub struct Literals {
    /// Each literal as written, followed by a line feed.
    text: Box<str>,
    /// Where each literal is in `text`.
    ranges: Box<[(u32, u32)]>,
}

impl Literals {
    /// The literals at `ranges` (byte ranges of `source`, in order).
    pub fn of(source: &str, ranges: &[(u32, u32)]) -> Literals {
        let len: usize = ranges.iter().map(|&(s, e)| (e - s) as usize + 1).sum();
        let mut text = String::with_capacity(len);
        let mut out = Vec::with_capacity(ranges.len());
        for &(s, e) in ranges {
            let Some(lit) = source.get(s as usize..e as usize) else {
                continue;
            };
            let start = text.len() as u32;
            text.push_str(lit);
            out.push((start, text.len() as u32));
            text.push('\n');
        }
        Literals {
            text: text.into_boxed_str(),
            ranges: out.into_boxed_slice(),
        }
    }

    /// The text the ranges point into: the literals one after another, a line feed after each
    /// (nothing else between them).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Where each literal is in [`Self::text`], in order.
    pub fn ranges(&self) -> &[(u32, u32)] {
        &self.ranges
    }

    /// Each literal as written.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.ranges
            .iter()
            .map(|&(s, e)| &self.text[s as usize..e as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_each_literal_as_written_and_nothing_between() {
        let src = r#"call("/v1/charges", x, "a\"b") // "not kept""#;
        let ranges = [(5u32, 18u32), (23, 29)];
        let lits = Literals::of(src, &ranges);
        assert_eq!(
            lits.iter().collect::<Vec<_>>(),
            ["\"/v1/charges\"", r#""a\"b""#]
        );
        assert_eq!(lits.text(), "\"/v1/charges\"\n\"a\\\"b\"\n");
        assert_eq!(lits.ranges(), &[(0, 13), (14, 20)]);
        // A range that is not on the text's character boundaries is left out, not a panic.
        let odd = Literals::of("é\"x\"", &[(1, 4)]);
        assert_eq!(odd.iter().count(), 0);
    }
}
