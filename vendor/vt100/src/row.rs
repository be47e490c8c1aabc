use crate::term::BufWrite as _;
use alloc::{string::String, vec::Vec};

// tend fork: a row whose cells are all default holds no cells at all
// (`cells` is empty and `len` is its width), so blank rows -- most of a
// TUI's screen, and nearly all of the hidden primary grid of an
// alternate-screen program -- cost a few bytes instead of 32 bytes a
// column. Reads of a blank row see `Cell::DEFAULT`. Clearing a row to
// default attributes frees its cells again. (Keeping their room for the
// line written next saved 2 % of a Gemini CLI replay's instructions and
// cost 1.5-2 MB more at 50 panes: the rows kept the widest they had been.)
//
// A row holds its cells only up to the last column written (`cells` may be
// shorter than `len`; the columns past it are default): a line of 80
// characters in a 200-column pane holds 80 cells, not 200. Writing a cell
// (`get_mut`) grows the row to that column; the mutations that move cells
// along the row (insert, remove, clearing to a colour, growing with a
// non-default cell) go through `materialize`, which gives it all its cells.
//
// Each mutation also marks the row `dirty`, so that a reader can tell which
// rows changed since it last looked (see `Screen::row_versions`).
#[derive(Clone, Debug)]
pub struct Row {
    cells: Vec<crate::Cell>,
    len: u16,
    wrapped: bool,
    dirty: bool,
    version: u64,
}

impl Row {
    pub fn new(cols: u16) -> Self {
        Self {
            cells: Vec::new(),
            len: cols,
            wrapped: false,
            dirty: true,
            version: 0,
        }
    }

    fn cols(&self) -> u16 {
        self.len
    }

    /// True when the row holds no cells (all of them are default).
    fn is_blank(&self) -> bool {
        self.cells.is_empty()
    }

    /// Gives the row all its cells, before a mutation that moves them.
    fn materialize(&mut self) {
        self.dirty = true;
        let len = usize::from(self.len);
        if self.cells.len() < len {
            self.cells.reserve_exact(len - self.cells.len());
            self.cells.resize(len, crate::Cell::new());
        }
    }

    /// Holds the cells up to `col` (within the row), before writing it. The
    /// room grows by doubling, never past the row's width.
    #[inline]
    fn hold(&mut self, col: usize) {
        if col < self.cells.len() {
            return;
        }
        let want = col + 1;
        let cap = self.cells.capacity();
        if cap < want {
            let room = want.max(cap * 2).max(16).min(usize::from(self.len));
            self.cells.reserve_exact(room - self.cells.len());
        }
        self.cells.resize(want, crate::Cell::new());
    }

    /// Empties a row cleared to default attributes. tend fork: the
    /// allocation is kept for the text that usually follows at once (a
    /// full-frame redraw erases each line and writes it again: freeing and
    /// growing the cells again was a tenth of what such output cost), and
    /// freed by [`Row::release_spare`] at the end of the bytes processed.
    fn blank(&mut self) {
        self.dirty = true;
        self.cells.clear();
    }

    /// tend fork: at the end of the bytes processed (see [`Row::blank`]),
    /// frees the room of a row that is blank, and gives back what a row
    /// written shorter than before keeps beyond the room growing to its
    /// cells would have given it: blank rows hold nothing, and a short line
    /// no more than it would have without the kept room.
    pub fn release_spare(&mut self) {
        let held = self.cells.len();
        let cap = self.cells.capacity();
        if held == 0 {
            if cap > 0 {
                self.cells = Vec::new();
            }
            return;
        }
        let room = held
            .next_power_of_two()
            .max(16)
            .min(usize::from(self.len).max(held));
        if cap > room {
            self.cells.shrink_to(room);
        }
    }

    /// The cell at `col`, which must be within the row.
    #[inline]
    fn cell(&self, col: usize) -> &crate::Cell {
        match self.cells.get(col) {
            Some(cell) => cell,
            None => {
                assert!(col < usize::from(self.len), "column out of the row");
                &crate::Cell::DEFAULT
            }
        }
    }

    /// Bytes held on the heap by this row's cells.
    pub fn heap_bytes(&self) -> usize {
        self.cells.capacity() * core::mem::size_of::<crate::Cell>()
    }

    /// A number that changes whenever the row's contents may have changed:
    /// equal versions (from the same `counter`) mean equal contents.
    pub fn version(&mut self, counter: &mut u64) -> u64 {
        if self.dirty || self.version == 0 {
            *counter += 1;
            self.version = *counter;
            self.dirty = false;
        }
        self.version
    }

    pub fn clear(&mut self, attrs: crate::attrs::Attrs) {
        if attrs == crate::attrs::Attrs::default() {
            self.blank();
        } else {
            self.materialize();
            for cell in &mut self.cells {
                cell.clear(attrs);
            }
        }
        self.wrapped = false;
    }

    pub fn reset(&mut self) {
        self.blank();
        self.wrapped = false;
    }

    fn cells(&self) -> impl Iterator<Item = &crate::Cell> {
        let blank = usize::from(self.len).saturating_sub(self.cells.len());
        self.cells
            .iter()
            .chain(core::iter::repeat_n(&crate::Cell::DEFAULT, blank))
    }

    #[inline]
    pub fn get(&self, col: u16) -> Option<&crate::Cell> {
        // Materialized rows first: this is the per-character path.
        match self.cells.get(usize::from(col)) {
            Some(cell) => Some(cell),
            None if col < self.len => Some(&crate::Cell::DEFAULT),
            None => None,
        }
    }

    #[inline]
    pub fn get_mut(&mut self, col: u16) -> Option<&mut crate::Cell> {
        self.dirty = true;
        if col < self.len {
            self.hold(usize::from(col));
        }
        self.cells.get_mut(usize::from(col))
    }

    /// tend fork: writes `text`, one-cell characters, from `col` on (all
    /// within the row), leaving the row as `get_mut(col + i)` then
    /// `set_narrow` for each character in turn, with the tidying of wide
    /// characters that `WrappedScreen::text_narrow` does, would leave it:
    /// a wide character whose right half the first one overwrites is
    /// cleared, and so is the right half of one whose left half the last
    /// one overwrites. (Inside the run every such half is overwritten.)
    pub(crate) fn set_narrow_run(
        &mut self,
        col: u16,
        text: &[char],
        attrs: crate::attrs::Attrs,
    ) {
        let start = usize::from(col);
        let end = start + text.len();
        if text.is_empty() || end > usize::from(self.len) {
            return;
        }
        self.dirty = true;
        self.hold(end - 1);
        // Whether the cell written last was the left half of a wide
        // character when it was written: the character before it blanked
        // the right half it overwrote, so a cell after a wide one never is.
        let mut was_wide = false;
        for (cell, &c) in self.cells[start..end].iter_mut().zip(text) {
            was_wide = !was_wide && cell.is_wide();
            cell.set_narrow(c, attrs);
        }
        if start > 0 {
            let prev = &mut self.cells[start - 1];
            if prev.is_wide() {
                prev.clear(*prev.attrs());
            }
        }
        if was_wide {
            if let Some(next) = self.get_mut(u16::try_from(end).unwrap_or(u16::MAX)) {
                next.set(' ', attrs);
            }
        }
    }

    /// Inserts empty cells without changing the size of the row.
    ///
    /// Cells at the end are dropped.
    pub fn insert(&mut self, i: u16, count: u16) {
        self.materialize();
        // tend fork: `i` past the row's end (a cursor left beyond it by
        // garbage input) inserts nothing instead of overflowing.
        let count = usize::from(count).min(self.cells.len().saturating_sub(usize::from(i)));
        if count == 0 {
            // Always "truncate", even when `count` is 0. However, because we
            // didn't actually insert any cells, we don't need to follow the
            // whole truncation procedure in `Self::set_truncated`; we can just
            // clear the `wrapped` flag.
            self.wrapped = false;
            return;
        }

        let is_wide_continuation = self.get_mut(i).is_some_and(|cell| {
            let is_wc = cell.is_wide_continuation();
            if is_wc {
                cell.set_wide_continuation(false);
            }
            is_wc
        });

        let slice = &mut self.cells[usize::from(i)..];
        slice.rotate_right(count);
        slice[..count].fill(crate::Cell::new());
        if is_wide_continuation {
            if let Some(cell) = self.get_mut(i) {
                cell.set_wide_continuation(true);
            }
        }
        self.set_truncated();
    }

    /// Removes cells without changing the size of the row.
    ///
    /// Empty cells are added to the end.
    pub fn remove(&mut self, range: core::ops::Range<u16>) {
        self.materialize();
        self.wrapped = false;
        if range.start >= range.end {
            return;
        }

        self.clear_wide(range.start);
        let last = range.end - 1;
        if last != range.start {
            self.clear_wide(last);
        }

        let count = usize::from(range.end - range.start);
        let slice = &mut self.cells[usize::from(range.start)..];
        slice[..count].fill(crate::Cell::new());
        slice.rotate_left(count);
    }

    pub fn erase(&mut self, i: u16, attrs: crate::attrs::Attrs) {
        self.dirty = true;
        let at = usize::from(i);
        assert!(at < usize::from(self.len), "column out of the row");
        // Past the cells held the row is default already: erasing to
        // default attributes leaves it so.
        if at < self.cells.len() || attrs != crate::attrs::Attrs::default() {
            self.hold(at);
        }
        let wide = self.cell(at).is_wide();
        self.clear_wide(i);
        if let Some(cell) = self.cells.get_mut(at) {
            cell.clear(attrs);
        }
        // `wide` is captured pre-erase on purpose: a 2-wide char occupies the
        // logical last column at cols() - 2. saturating_sub guards the
        // degenerate case of an orphaned wide cell in a one-column row, where
        // cols() - 2 would underflow.
        if i == self.cols().saturating_sub(if wide { 2 } else { 1 }) {
            self.wrapped = false;
        }
    }

    pub fn truncate(&mut self, len: u16) {
        self.dirty = true;
        self.cells.truncate(usize::from(len));
        self.len = self.len.min(len);
        self.set_truncated();
    }

    fn set_truncated(&mut self) {
        self.wrapped = false;
        // Only the row's last column (a default one when not held).
        if self.cells.len() < usize::from(self.len) {
            return;
        }
        if let Some(last_cell) = self.cells.last_mut() {
            if last_cell.is_wide() {
                last_cell.clear(*last_cell.attrs());
            }
        }
    }

    fn grow_unchecked(&mut self, len: u16, cell: crate::Cell) {
        debug_assert!(self.len < len);
        self.dirty = true;
        if cell == crate::Cell::DEFAULT {
            // The new columns are default: nothing to hold.
            self.len = len;
        } else {
            self.materialize();
            self.cells.resize(len.into(), cell);
            self.len = len;
        }
        self.wrapped = false;
    }

    /// Like [`Self::resize`], but never decreases the size of the row.
    pub fn grow(&mut self, len: u16, cell: crate::Cell) {
        if self.len < len {
            self.grow_unchecked(len, cell);
        }
    }

    pub fn resize(&mut self, len: u16, cell: crate::Cell) {
        match len.cmp(&self.len) {
            core::cmp::Ordering::Equal => {}
            core::cmp::Ordering::Less => {
                self.truncate(len);
            }
            core::cmp::Ordering::Greater => {
                self.grow_unchecked(len, cell);
            }
        }
    }

    /// Trims trailing blank cells from the row.
    pub fn trim(&mut self) {
        self.dirty = true;
        if self.is_blank() {
            self.len = 0;
            self.cells = Vec::new();
            return;
        }
        let excess = self
            .cells
            .iter()
            .rev()
            .take_while(|c| **c == crate::cell::Cell::DEFAULT)
            .count();
        self.cells.truncate(self.cells.len() - excess);
        self.cells.shrink_to_fit();
        // we limit the number of cols to a u16 (see Size)
        self.len = self.cells.len().try_into().unwrap();
    }

    pub fn wrap(&mut self, wrap: bool) {
        self.dirty |= self.wrapped != wrap;
        self.wrapped = wrap;
    }

    pub fn wrapped(&self) -> bool {
        self.wrapped
    }

    pub fn clear_wide(&mut self, col: u16) {
        if self.is_blank() {
            // No wide characters in a blank row.
            return;
        }
        self.dirty = true;
        let col_idx = usize::from(col);
        let Some(cell) = self.cells.get(col_idx) else {
            // A default cell: neither half of a wide character.
            return;
        };
        let other = if cell.is_wide() {
            let next = col_idx + 1;
            if next >= self.cells.len() && next < usize::from(self.len) {
                // Its other half is a default cell, which clearing leaves
                // as it is.
                return;
            }
            if next >= self.cells.len() {
                // Wide char at the last column with no continuation
                // (e.g. a shrinking resize that split the pair).
                // Clear the cell in place instead of indexing past
                // the end.
                let attrs = *self.cells[col_idx].attrs();
                self.cells[col_idx].clear(attrs);
                return;
            }
            &mut self.cells[next]
        } else if cell.is_wide_continuation() {
            &mut self.cells[usize::from(col - 1)]
        } else {
            return;
        };
        other.clear(*other.attrs());
    }

    pub fn write_contents(
        &self,
        contents: &mut String,
        start: u16,
        width: u16,
        wrapping: bool,
    ) {
        // tend fork: only the held cells are walked, as a slice: the
        // columns past them are default (no contents, not wide) and write
        // nothing. Upstream walked every column through a chained iterator;
        // reading rows into text is the first step of every evaluation.
        let from = usize::from(start);
        let to = (from + usize::from(width)).min(self.cells.len());
        let mut prev_was_wide = false;
        let mut prev_col = from;
        for (col, cell) in
            self.cells.get(from..to).unwrap_or(&[]).iter().enumerate()
        {
            if prev_was_wide {
                prev_was_wide = false;
                continue;
            }
            prev_was_wide = cell.is_wide();
            if cell.has_contents() {
                let col = from + col;
                contents.extend(core::iter::repeat_n(' ', col.saturating_sub(prev_col)));
                cell.push_contents(contents);
                prev_col = col + if cell.is_wide() { 2 } else { 1 };
            }
        }
        if prev_col == from && wrapping {
            contents.push('\n');
        }
    }

    pub fn write_contents_formatted(
        &self,
        contents: &mut String,
        start: u16,
        width: u16,
        row: u16,
        wrapping: bool,
        prev_pos: Option<crate::grid::Pos>,
        prev_attrs: Option<crate::attrs::Attrs>,
    ) -> (crate::grid::Pos, crate::attrs::Attrs) {
        let mut prev_was_wide = false;

        let mut prev_pos = prev_pos.unwrap_or_else(|| {
            if wrapping {
                crate::grid::Pos {
                    row: row - 1,
                    col: self.cols(),
                }
            } else {
                crate::grid::Pos { row, col: start }
            }
        });
        let mut prev_attrs = prev_attrs.unwrap_or_default();

        let first_cell = self.cell(usize::from(start));
        if wrapping && first_cell == &crate::cell::Cell::DEFAULT {
            let default_attrs = crate::cell::Cell::DEFAULT.attrs();
            if prev_attrs != *default_attrs {
                default_attrs.write_escape_code_diff(contents, &prev_attrs);
                prev_attrs = *default_attrs;
            }
            contents.push(' ');
            crate::term::Backspace.write_buf(contents);
            crate::term::EraseChar::new(1).write_buf(contents);
            prev_pos = crate::grid::Pos { row, col: 0 };
        }

        let mut erase: Option<(u16, &crate::attrs::Attrs)> = None;
        for (col, cell) in self
            .cells()
            .enumerate()
            .skip(usize::from(start))
            .take(usize::from(width))
        {
            if prev_was_wide {
                prev_was_wide = false;
                continue;
            }
            prev_was_wide = cell.is_wide();

            // we limit the number of cols to a u16 (see Size)
            let col: u16 = col.try_into().unwrap();
            let pos = crate::grid::Pos { row, col };

            if let Some((prev_col, attrs)) = erase {
                if cell.has_contents() || cell.attrs() != attrs {
                    let new_pos = crate::grid::Pos { row, col: prev_col };
                    if wrapping
                        && prev_pos.row + 1 == new_pos.row
                        && prev_pos.col >= self.cols()
                    {
                        if new_pos.col > 0 {
                            contents.push_str(
                                &" ".repeat(usize::from(new_pos.col)),
                            );
                        } else {
                            contents.push(' ');
                            crate::term::Backspace.write_buf(contents);
                        }
                    } else {
                        crate::term::MoveFromTo::new(prev_pos, new_pos)
                            .write_buf(contents);
                    }
                    prev_pos = new_pos;
                    if &prev_attrs != attrs {
                        attrs.write_escape_code_diff(contents, &prev_attrs);
                        prev_attrs = *attrs;
                    }
                    crate::term::EraseChar::new(pos.col - prev_col)
                        .write_buf(contents);
                    erase = None;
                }
            }

            if *cell != crate::cell::Cell::DEFAULT {
                let attrs = cell.attrs();
                if cell.has_contents() {
                    if pos != prev_pos {
                        if !wrapping
                            || prev_pos.row + 1 != pos.row
                            || prev_pos.col
                                < self.cols() - u16::from(cell.is_wide())
                            || pos.col != 0
                        {
                            crate::term::MoveFromTo::new(prev_pos, pos)
                                .write_buf(contents);
                        }
                        prev_pos = pos;
                    }

                    if &prev_attrs != attrs {
                        attrs.write_escape_code_diff(contents, &prev_attrs);
                        prev_attrs = *attrs;
                    }

                    prev_pos.col += if cell.is_wide() { 2 } else { 1 };
                    let cell_contents = cell.contents();
                    contents.push_str(cell_contents);
                } else if erase.is_none() {
                    erase = Some((pos.col, attrs));
                }
            }
        }
        if let Some((prev_col, attrs)) = erase {
            let new_pos = crate::grid::Pos { row, col: prev_col };
            if wrapping
                && prev_pos.row + 1 == new_pos.row
                && prev_pos.col >= self.cols()
            {
                if new_pos.col > 0 {
                    contents.push_str(&" ".repeat(usize::from(new_pos.col)));
                } else {
                    contents.push(' ');
                    crate::term::Backspace.write_buf(contents);
                }
            } else {
                crate::term::MoveFromTo::new(prev_pos, new_pos)
                    .write_buf(contents);
            }
            prev_pos = new_pos;
            if &prev_attrs != attrs {
                attrs.write_escape_code_diff(contents, &prev_attrs);
                prev_attrs = *attrs;
            }
            crate::term::ClearRowForward.write_buf(contents);
        }

        (prev_pos, prev_attrs)
    }

    pub fn write_contents_formatted_basic(
        &self,
        writer: &mut impl alloc::fmt::Write,
        current_attrs: &mut crate::attrs::Attrs,
    ) -> alloc::fmt::Result {
        let mut prev_was_wide = false;
        let mut num_empty = 0;

        for cell in self.cells() {
            if core::mem::take(&mut prev_was_wide) {
                continue;
            }
            prev_was_wide = cell.is_wide();

            if *cell == crate::cell::Cell::DEFAULT {
                num_empty += 1;
                continue;
            }

            for _ in 0..core::mem::take(&mut num_empty) {
                writer.write_char(' ')?;
            }

            let new_attrs = *cell.attrs();
            new_attrs.write_escape_code_diff_fmt(writer, current_attrs)?;
            *current_attrs = new_attrs;
            if cell.has_contents() {
                writer.write_str(cell.contents())?;
            } else {
                writer.write_char(' ')?;
            }
        }
        Ok(())
    }

    // while it's true that most of the logic in this is identical to
    // write_contents_formatted, i can't figure out how to break out the
    // common parts without making things noticeably slower.
    pub fn write_contents_diff(
        &self,
        contents: &mut String,
        prev: &Self,
        start: u16,
        width: u16,
        row: u16,
        wrapping: bool,
        prev_wrapping: bool,
        mut prev_pos: crate::grid::Pos,
        mut prev_attrs: crate::attrs::Attrs,
    ) -> (crate::grid::Pos, crate::attrs::Attrs) {
        let mut prev_was_wide = false;

        let first_cell = self.cell(usize::from(start));
        let prev_first_cell = prev.cell(usize::from(start));
        if wrapping
            && !prev_wrapping
            && first_cell == prev_first_cell
            && prev_pos.row + 1 == row
            && prev_pos.col
                >= self.cols() - u16::from(prev_first_cell.is_wide())
        {
            let first_cell_attrs = first_cell.attrs();
            if &prev_attrs != first_cell_attrs {
                first_cell_attrs
                    .write_escape_code_diff(contents, &prev_attrs);
                prev_attrs = *first_cell_attrs;
            }
            let mut cell_contents = prev_first_cell.contents();
            let need_erase = if cell_contents.is_empty() {
                cell_contents = " ";
                true
            } else {
                false
            };
            contents.push_str(cell_contents);
            crate::term::Backspace.write_buf(contents);
            if prev_first_cell.is_wide() {
                crate::term::Backspace.write_buf(contents);
            }
            if need_erase {
                crate::term::EraseChar::new(1).write_buf(contents);
            }
            prev_pos = crate::grid::Pos { row, col: 0 };
        }

        let mut erase: Option<(u16, &crate::attrs::Attrs)> = None;
        for (col, (cell, prev_cell)) in self
            .cells()
            .zip(prev.cells())
            .enumerate()
            .skip(usize::from(start))
            .take(usize::from(width))
        {
            if prev_was_wide {
                prev_was_wide = false;
                continue;
            }
            prev_was_wide = cell.is_wide();

            // we limit the number of cols to a u16 (see Size)
            let col: u16 = col.try_into().unwrap();
            let pos = crate::grid::Pos { row, col };

            if let Some((prev_col, attrs)) = erase {
                if cell.has_contents() || cell.attrs() != attrs {
                    let new_pos = crate::grid::Pos { row, col: prev_col };
                    if wrapping
                        && prev_pos.row + 1 == new_pos.row
                        && prev_pos.col >= self.cols()
                    {
                        if new_pos.col > 0 {
                            contents.push_str(
                                &" ".repeat(usize::from(new_pos.col)),
                            );
                        } else {
                            contents.push(' ');
                            crate::term::Backspace.write_buf(contents);
                        }
                    } else {
                        crate::term::MoveFromTo::new(prev_pos, new_pos)
                            .write_buf(contents);
                    }
                    prev_pos = new_pos;
                    if &prev_attrs != attrs {
                        attrs.write_escape_code_diff(contents, &prev_attrs);
                        prev_attrs = *attrs;
                    }
                    crate::term::EraseChar::new(pos.col - prev_col)
                        .write_buf(contents);
                    erase = None;
                }
            }

            if cell != prev_cell {
                let attrs = cell.attrs();
                if cell.has_contents() {
                    if pos != prev_pos {
                        if !wrapping
                            || prev_pos.row + 1 != pos.row
                            || prev_pos.col
                                < self.cols() - u16::from(cell.is_wide())
                            || pos.col != 0
                        {
                            crate::term::MoveFromTo::new(prev_pos, pos)
                                .write_buf(contents);
                        }
                        prev_pos = pos;
                    }

                    if &prev_attrs != attrs {
                        attrs.write_escape_code_diff(contents, &prev_attrs);
                        prev_attrs = *attrs;
                    }

                    prev_pos.col += if cell.is_wide() { 2 } else { 1 };
                    contents.push_str(cell.contents());
                } else if erase.is_none() {
                    erase = Some((pos.col, attrs));
                }
            }
        }
        if let Some((prev_col, attrs)) = erase {
            let new_pos = crate::grid::Pos { row, col: prev_col };
            if wrapping
                && prev_pos.row + 1 == new_pos.row
                && prev_pos.col >= self.cols()
            {
                if new_pos.col > 0 {
                    contents.push_str(&" ".repeat(usize::from(new_pos.col)));
                } else {
                    contents.push(' ');
                    crate::term::Backspace.write_buf(contents);
                }
            } else {
                crate::term::MoveFromTo::new(prev_pos, new_pos)
                    .write_buf(contents);
            }
            prev_pos = new_pos;
            if &prev_attrs != attrs {
                attrs.write_escape_code_diff(contents, &prev_attrs);
                prev_attrs = *attrs;
            }
            crate::term::ClearRowForward.write_buf(contents);
        }

        // if this row is going from wrapped to not wrapped, we need to erase
        // and redraw the last character to break wrapping. if this row is
        // wrapped, we need to redraw the last character without erasing it to
        // position the cursor after the end of the line correctly so that
        // drawing the next line can just start writing and be wrapped.
        if (!self.wrapped && prev.wrapped) || (!prev.wrapped && self.wrapped)
        {
            let end_pos = if self
                .cell(usize::from(self.cols() - 1))
                .is_wide_continuation()
            {
                crate::grid::Pos {
                    row,
                    col: self.cols() - 2,
                }
            } else {
                crate::grid::Pos {
                    row,
                    col: self.cols() - 1,
                }
            };
            crate::term::MoveFromTo::new(prev_pos, end_pos)
                .write_buf(contents);
            prev_pos = end_pos;
            if !self.wrapped {
                crate::term::EraseChar::new(1).write_buf(contents);
            }
            let end_cell = self.cell(usize::from(end_pos.col));
            if end_cell.has_contents() {
                let attrs = end_cell.attrs();
                if &prev_attrs != attrs {
                    attrs.write_escape_code_diff(contents, &prev_attrs);
                    prev_attrs = *attrs;
                }
                contents.push_str(end_cell.contents());
                prev_pos.col += if end_cell.is_wide() { 2 } else { 1 };
            }
        }

        (prev_pos, prev_attrs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // An orphaned wide cell (wide flag set, no continuation) in a
    // one-column row must not make Row::erase underflow when it derives the
    // logical last column as cols() - 2. Covers the Copilot review note on
    // the clear_wide OOB fix: clear_wide itself was hardened, but its caller
    // erase computed cols() - 2 == 1 - 2 from the captured `wide` value.
    #[test]
    fn erase_wide_cell_in_one_column_row_does_not_underflow() {
        let attrs = crate::attrs::Attrs::default();
        let mut row = Row::new(1);
        // A 2-wide char in the only column: a wide cell with no room for a
        // continuation cell.
        row.get_mut(0).unwrap().set('中', attrs);
        assert!(row.get(0).unwrap().is_wide());

        row.erase(0, attrs);

        let cell = row.get(0).unwrap();
        assert!(!cell.is_wide(), "erased cell must no longer be wide");
        assert!(!cell.has_contents(), "erased cell must be empty");
    }

    // tend fork: blank rows.

    #[test]
    fn a_new_row_holds_no_cells_until_written() {
        let mut row = Row::new(80);
        assert_eq!(row.heap_bytes(), 0);
        assert_eq!(row.get(79), Some(&crate::Cell::DEFAULT));
        assert_eq!(row.get(80), None);
        assert_eq!(row.cells().count(), 80);
        row.get_mut(3).unwrap().set('x', crate::attrs::Attrs::default());
        // Cells up to the one written, with room for a few more.
        assert_eq!(row.heap_bytes(), 16 * 32);
        row.get_mut(40).unwrap().set('y', crate::attrs::Attrs::default());
        assert_eq!(row.heap_bytes(), 41 * 32);
        row.get_mut(41).unwrap().set('z', crate::attrs::Attrs::default());
        assert_eq!(row.heap_bytes(), 80 * 32, "doubling stops at the width");
        assert_eq!(row.get(3).unwrap().contents(), "x");
        let mut text = String::new();
        row.write_contents(&mut text, 0, 80, false);
        assert_eq!(text, format!("   x{}yz", " ".repeat(36)));
        row.clear(crate::attrs::Attrs::default());
        assert_eq!(row.get(3), Some(&crate::Cell::DEFAULT));
        assert_eq!(row.cells().count(), 80);
        // The room is kept for the next line of text until released.
        assert_eq!(row.heap_bytes(), 80 * 32);
        row.get_mut(5).unwrap().set('w', crate::attrs::Attrs::default());
        assert_eq!(row.heap_bytes(), 80 * 32, "written again without growing");
        row.release_spare();
        assert_eq!(
            row.heap_bytes(),
            16 * 32,
            "a short line keeps the room growing would have given it"
        );
        for col in 0..70 {
            row.get_mut(col).unwrap().set('v', crate::attrs::Attrs::default());
        }
        row.release_spare();
        assert_eq!(row.heap_bytes(), 80 * 32, "a long one keeps its cells");
        row.clear(crate::attrs::Attrs::default());
        row.release_spare();
        assert_eq!(row.heap_bytes(), 0);
        assert_eq!(row.get(3), Some(&crate::Cell::DEFAULT));
    }

    #[test]
    fn blank_rows_resize_trim_and_clear_like_full_ones() {
        let mut row = Row::new(10);
        row.grow(20, crate::Cell::DEFAULT);
        assert_eq!((row.cols(), row.heap_bytes()), (20, 0));
        row.resize(5, crate::Cell::DEFAULT);
        assert_eq!((row.cols(), row.heap_bytes()), (5, 0));
        row.trim();
        assert_eq!(row.cols(), 0);
        let mut row = Row::new(4);
        // Clearing to a background colour needs the cells.
        let mut attrs = crate::attrs::Attrs::default();
        attrs.bgcolor = crate::Color::Idx(1);
        row.clear(attrs);
        assert_eq!(row.get(0).unwrap().attrs(), &attrs);
        row.insert(1, 2);
        row.remove(0..1);
        row.erase(0, crate::attrs::Attrs::default());
        assert_eq!(row.cells().count(), 4);
    }

    #[test]
    fn versions_change_with_the_contents_only() {
        let mut counter = 0;
        let mut row = Row::new(10);
        let v1 = row.version(&mut counter);
        assert_eq!(row.version(&mut counter), v1);
        let _ = row.get(2);
        assert_eq!(row.version(&mut counter), v1, "a read is not a change");
        row.get_mut(2).unwrap().set('a', crate::attrs::Attrs::default());
        let v2 = row.version(&mut counter);
        assert_ne!(v2, v1);
        row.wrap(true);
        let v3 = row.version(&mut counter);
        assert_ne!(v3, v2);
        row.clear(crate::attrs::Attrs::default());
        assert_ne!(row.version(&mut counter), v3);
    }

    /// Upstream's `Row::write_contents`: every column walked, the default
    /// ones past the held cells too.
    fn upstream_contents(
        row: &Row,
        start: u16,
        width: u16,
        wrapping: bool,
    ) -> String {
        let mut contents = String::new();
        let mut prev_was_wide = false;
        let mut prev_col = start;
        for (col, cell) in row
            .cells()
            .enumerate()
            .skip(usize::from(start))
            .take(usize::from(width))
        {
            if prev_was_wide {
                prev_was_wide = false;
                continue;
            }
            prev_was_wide = cell.is_wide();
            let col: u16 = col.try_into().unwrap();
            if cell.has_contents() {
                for _ in 0..(col - prev_col) {
                    contents.push(' ');
                }
                prev_col += col - prev_col;
                contents.push_str(cell.contents());
                prev_col += if cell.is_wide() { 2 } else { 1 };
            }
        }
        if prev_col == start && wrapping {
            contents.push('\n');
        }
        contents
    }

    /// The same operations on a row holding only the cells written and on
    /// one holding all its cells from the start give the same row.
    #[test]
    fn held_cells_behave_like_a_full_row() {
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut colour = crate::attrs::Attrs::default();
        colour.bgcolor = crate::Color::Idx(4);
        for _ in 0..300 {
            let width = 1 + next(40) as u16;
            let mut held = Row::new(width);
            let mut full = Row::new(width);
            full.materialize();
            for _ in 0..40 {
                let cols = held.cols();
                assert_eq!(cols, full.cols());
                let col = if cols == 0 { 0 } else { next(u64::from(cols)) as u16 };
                let attrs = if next(4) == 0 {
                    colour
                } else {
                    crate::attrs::Attrs::default()
                };
                let op = next(11);
                for row in [&mut held, &mut full] {
                    match op {
                        0..=2 => {
                            if let Some(c) = row.get_mut(col) {
                                c.set(char::from(b'a' + (col % 26) as u8), attrs);
                            }
                        }
                        3 if col + 1 < cols => {
                            row.clear_wide(col);
                            row.clear_wide(col + 1);
                            if let Some(c) = row.get_mut(col) {
                                c.set('\u{4e2d}', attrs);
                            }
                            if let Some(c) = row.get_mut(col + 1) {
                                c.clear(attrs);
                                c.set_wide_continuation(true);
                            }
                        }
                        4 if cols > 0 => row.erase(col, attrs),
                        5 if cols > 0 => row.insert(col, 1 + (col % 3)),
                        6 if cols > 0 => row.remove(col..cols.min(col + 2)),
                        7 => row.truncate(col.max(1)),
                        8 => row.resize(cols + 1 + col % 5, crate::Cell::new()),
                        9 => row.clear(attrs),
                        10 => row.wrap(col % 2 == 0),
                        _ => {}
                    }
                }
                let a: Vec<&crate::Cell> = held.cells().collect();
                let b: Vec<&crate::Cell> = full.cells().collect();
                assert_eq!(a, b, "op {op} at {col}");
                // Read into text, from any column, the held row gives what
                // upstream's walk over every column gives.
                let cols = held.cols();
                let start = if cols == 0 { 0 } else { next(u64::from(cols)) as u16 };
                let width = next(u64::from(cols) + 2) as u16;
                for wrapping in [false, true] {
                    let mut text = String::new();
                    held.write_contents(&mut text, start, width, wrapping);
                    assert_eq!(
                        text,
                        upstream_contents(&full, start, width, wrapping),
                        "op {op} at {col}, read from {start} for {width}"
                    );
                }
                assert_eq!(held.wrapped(), full.wrapped(), "op {op} at {col}");
                // Growing with default cells holds none: hold them all
                // again, as a row did before rows held only what was
                // written.
                full.materialize();
            }
        }
    }
}
