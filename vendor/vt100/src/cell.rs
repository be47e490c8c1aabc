use unicode_width::{UnicodeWidthChar as _, UnicodeWidthStr as _};

// chosen to make the size of the cell struct 32 bytes
const CONTENT_BYTES: usize = 22;

const IS_WIDE: u8 = 0b1000_0000;
const IS_WIDE_CONTINUATION: u8 = 0b0100_0000;
const LEN_BITS: u8 = 0b0001_1111;

/// Represents a single terminal cell.
#[derive(Clone, Debug, Eq)]
pub struct Cell {
    contents: [u8; CONTENT_BYTES],
    len: u8,
    attrs: crate::attrs::Attrs,
}
const _: () = assert!(core::mem::size_of::<Cell>() == 32);

impl PartialEq<Self> for Cell {
    fn eq(&self, other: &Self) -> bool {
        if self.len != other.len {
            return false;
        }
        if self.attrs != other.attrs {
            return false;
        }
        let len = self.len();
        self.contents[..len] == other.contents[..len]
    }
}

impl Cell {
    pub(crate) const DEFAULT: Self = Self::new();

    pub(crate) const fn new() -> Self {
        Self {
            contents: [0; CONTENT_BYTES],
            len: 0,
            attrs: crate::attrs::Attrs::new(),
        }
    }

    fn len(&self) -> usize {
        usize::from(self.len & LEN_BITS)
    }

    pub(crate) fn set(&mut self, c: char, a: crate::attrs::Attrs) {
        self.len = 0;
        self.append_char(0, c);
        // if we're setting a single character, we can just look at that one
        // character to determine the cell width
        self.set_wide(c.width().unwrap_or(1) > 1);
        self.attrs = a;
    }

    /// tend fork: [`Cell::set`] for a character the caller knows to be one
    /// cell wide (so not U+FE0F, which is zero wide): none of `set`'s width
    /// lookups are needed.
    pub(crate) fn set_narrow(&mut self, c: char, a: crate::attrs::Attrs) {
        debug_assert_eq!(c.width(), Some(1));
        // Not wide, not a wide continuation: the flags live in `len`.
        if c.is_ascii() {
            // An ASCII character is its one UTF-8 byte.
            #[allow(clippy::as_conversions, clippy::cast_possible_truncation)]
            let byte = c as u8;
            self.contents[0] = byte;
            self.len = 1;
        } else {
            // Its UTF-8 bytes (at most four) and their count; no flags
            // (not wide, not a continuation), and no emoji presentation to
            // look for in a one-cell character.
            let n = c.encode_utf8(&mut self.contents).len();
            self.len = u8::try_from(n).unwrap_or(0);
        }
        self.attrs = a;
    }

    pub(crate) fn append(&mut self, c: char) {
        let len = self.len();
        if len >= CONTENT_BYTES - 4 {
            return;
        }
        if len == 0 {
            self.contents[0] = b' ';
            self.len += 1;
        }

        // we already checked that we have space for another codepoint
        self.append_char(self.len(), c);
    }

    pub(crate) fn set_contents(&mut self, s: &str, a: crate::attrs::Attrs) {
        let mut chars = s.chars();
        let Some(c) = chars.next() else {
            return;
        };
        self.set(c, a);
        for c in chars {
            self.append(c);
        }
    }

    // Writes bytes representing c at start
    // Requires caller to verify start <= CODEPOINTS_IN_CELL * 4
    fn append_char(&mut self, start: usize, c: char) {
        c.encode_utf8(&mut self.contents[start..]);
        self.len += u8::try_from(c.len_utf8()).unwrap();
        // if we're appending characters, we have to account for emoji
        // presentation being requested, which can turn a base character that
        // is otherwise considered to be narrow into a wide character
        if c == '\u{FE0F}' {
            self.set_wide(self.contents().width() > 1);
        }
    }

    pub(crate) fn clear(&mut self, attrs: crate::attrs::Attrs) {
        self.len = 0;
        self.attrs = attrs;
    }

    /// Returns the text contents of the cell.
    ///
    /// Can include multiple unicode characters if combining characters are
    /// used, but will contain at most one character with a non-zero character
    /// width.
    // Since contents has been constructed by appending chars encoded as UTF-8 it will be valid UTF-8
    #[allow(clippy::missing_panics_doc)]
    #[must_use]
    pub fn contents(&self) -> &str {
        core::str::from_utf8(&self.contents[..self.len()]).unwrap()
    }

    /// tend fork: appends the cell's text to `out` (what `contents` returns),
    /// without validating it again as UTF-8 when it is one ASCII byte, as
    /// most cells are: reading a row into text is the first step of every
    /// evaluation.
    pub(crate) fn push_contents(&self, out: &mut alloc::string::String) {
        let first = self.contents[0];
        if self.len() == 1 && first.is_ascii() {
            out.push(char::from(first));
        } else {
            out.push_str(self.contents());
        }
    }

    /// Returns whether the cell contains any text data.
    #[must_use]
    pub fn has_contents(&self) -> bool {
        self.len() > 0
    }

    /// Returns whether the text data in the cell represents a wide character.
    #[must_use]
    pub fn is_wide(&self) -> bool {
        self.len & IS_WIDE != 0
    }

    /// Returns whether the cell contains the second half of a wide character
    /// (in other words, whether the previous cell in the row contains a wide
    /// character)
    #[must_use]
    pub fn is_wide_continuation(&self) -> bool {
        self.len & IS_WIDE_CONTINUATION != 0
    }

    fn set_wide(&mut self, wide: bool) {
        if wide {
            self.len |= IS_WIDE;
        } else {
            self.len &= !IS_WIDE;
        }
    }

    pub(crate) fn set_wide_continuation(&mut self, wide: bool) {
        if wide {
            self.len |= IS_WIDE_CONTINUATION;
        } else {
            self.len &= !IS_WIDE_CONTINUATION;
        }
    }

    pub(crate) fn attrs(&self) -> &crate::attrs::Attrs {
        &self.attrs
    }

    /// Returns the foreground color of the cell.
    #[must_use]
    pub fn fgcolor(&self) -> crate::Color {
        self.attrs.fgcolor
    }

    /// Returns the background color of the cell.
    #[must_use]
    pub fn bgcolor(&self) -> crate::Color {
        self.attrs.bgcolor
    }

    /// Returns whether the cell should be rendered with the bold text
    /// attribute.
    #[must_use]
    pub fn bold(&self) -> bool {
        self.attrs.bold()
    }

    /// Returns whether the cell should be rendered with the dim text
    /// attribute.
    #[must_use]
    pub fn dim(&self) -> bool {
        self.attrs.dim()
    }

    /// Returns whether the cell should be rendered with the italic text
    /// attribute.
    #[must_use]
    pub fn italic(&self) -> bool {
        self.attrs.italic()
    }

    /// Returns whether the cell should be rendered with the underlined text
    /// attribute.
    #[must_use]
    pub fn underline(&self) -> bool {
        self.attrs.underline()
    }

    /// Returns whether the cell should be rendered with the inverse text
    /// attribute.
    #[must_use]
    pub fn inverse(&self) -> bool {
        self.attrs.inverse()
    }
}
