//! Writing JSON as it is built: the commands serialise their own typed structs straight into the
//! buffered output, never through a `serde_json::Value` tree. These adapters let a struct field
//! be a lazily produced sequence, or any `Display` value written as a JSON string without first
//! becoming a `String`.

mod writer;

pub use writer::{escape_mask, EscapeMemo, JsonWriter, OUTPUT_BUFFER};

use crate::output::Buffered;
use serde::ser::{Serialize, SerializeSeq, Serializer};
use std::cell::Cell;
use std::fmt::Display;
use std::io::{self, Write};

/// A JSON array whose items come from an iterator, produced while serialising.
///
/// It is serialised once: the iterator is taken out on the first call (a second call writes an
/// empty array).
pub struct Seq<I>(Cell<Option<I>>);

impl<I> Seq<I> {
    pub fn new(items: I) -> Seq<I> {
        Seq(Cell::new(Some(items)))
    }

    /// The items, for writing them by hand; `None` once they were taken or serialised.
    pub fn take(&self) -> Option<I> {
        self.0.take()
    }
}

impl<I> Serialize for Seq<I>
where
    I: Iterator,
    I::Item: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let items = self.0.take();
        let mut seq = serializer.serialize_seq(None)?;
        for item in items.into_iter().flatten() {
            seq.serialize_element(&item)?;
        }
        seq.end()
    }
}

/// A `Display` value written as a JSON string.
pub struct Text<T>(pub T);

impl<T: Display> Serialize for Text<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&self.0)
    }
}

/// Writes `value` as one line of JSON.
///
/// The serialiser's many small writes (a comma, a key, a number) go to a buffer of this call's
/// own type, where they are copied inline, and only whole chunks reach `out`: through `dyn
/// Write`, each small write would be a call of its own.
pub fn write_line(out: &mut dyn Write, value: &impl Serialize) -> io::Result<()> {
    let mut buffered = Buffered::new(out);
    serde_json::to_writer(&mut buffered, value).map_err(io::Error::from)?;
    buffered.write_all(b"\n")?;
    buffered.finish()
}

/// Writes `value` as indented JSON and a line break, through a buffer as [`write_line`] does.
pub fn write_pretty(out: &mut dyn Write, value: &impl Serialize) -> io::Result<()> {
    let mut buffered = Buffered::new(out);
    serde_json::to_writer_pretty(&mut buffered, value).map_err(io::Error::from)?;
    buffered.write_all(b"\n")?;
    buffered.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize)]
    #[serde(bound = "")]
    struct Sample<I: Iterator<Item = u32>> {
        items: Seq<I>,
        name: Text<std::fmt::Arguments<'static>>,
    }

    #[test]
    fn sequences_and_text_are_written_in_place() {
        let sample = Sample {
            items: Seq::new([1, 2, 3].into_iter()),
            name: Text(format_args!("a \"quoted\"\nline")),
        };
        let mut out = Vec::new();
        write_line(&mut out, &sample).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"items\":[1,2,3],\"name\":\"a \\\"quoted\\\"\\nline\"}\n"
        );
    }

    #[test]
    fn a_write_error_is_an_io_error() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::from_raw_os_error(28))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let err = write_line(&mut Full, &[1, 2]).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(28));
    }
}
