//! Tokenizer for the Click language (after Click's `Lexer::next_lexeme`).

use alloc::string::{String, ToString};

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Ident,
    Variable,
    Arrow,
    /// `=>`: a many-to-many connection.
    TwoArrow,
    TwoColon,
    TwoBar,
    ThreeDot,
    ElementClass,
    Require,
    Define,
    Char(char),
    Eof,
}

#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub kind: Kind,
    pub text: String,
    pub file: String,
    pub line: u32,
    pub col: u32,
}

impl Token {
    pub fn is(&self, c: char) -> bool {
        self.kind == Kind::Char(c)
    }
}

pub(crate) struct Lexer<'a> {
    src: &'a str,
    b: &'a [u8],
    pos: usize,
    pub line: u32,
    line_start: usize,
    pub file: String,
    original_file: String,
}

fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'@'
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

impl<'a> Lexer<'a> {
    pub fn new(src: &'a str, file: &str) -> Lexer<'a> {
        Lexer {
            src,
            b: src.as_bytes(),
            pos: 0,
            line: 1,
            line_start: 0,
            file: file.to_string(),
            original_file: file.to_string(),
        }
    }

    pub fn col_at(&self, pos: usize) -> u32 {
        let start = self.line_start.min(pos);
        let chars = self
            .src
            .get(start..pos)
            .map(|s| s.chars().count())
            .unwrap_or(pos - start);
        chars as u32 + 1
    }

    fn newline_at(&mut self, i: usize) -> usize {
        // i points at '\n' or '\r'; returns index after the newline sequence
        let next = if self.b[i] == b'\r' && i + 1 < self.b.len() && self.b[i + 1] == b'\n' {
            i + 2
        } else {
            i + 1
        };
        self.line += 1;
        self.line_start = next;
        next
    }

    fn skip_line(&mut self, mut i: usize) -> usize {
        while i < self.b.len() {
            if self.b[i] == b'\n' || self.b[i] == b'\r' {
                return self.newline_at(i);
            }
            i += 1;
        }
        i
    }

    fn skip_slash_star(&mut self, mut i: usize) -> usize {
        while i < self.b.len() {
            if self.b[i] == b'\n' || self.b[i] == b'\r' {
                i = self.newline_at(i);
            } else if self.b[i] == b'*' && i + 1 < self.b.len() && self.b[i + 1] == b'/' {
                return i + 2;
            } else {
                i += 1;
            }
        }
        i
    }

    fn skip_backslash_angle(&mut self, mut i: usize) -> usize {
        while i < self.b.len() {
            let c = self.b[i];
            if c == b'\n' || c == b'\r' {
                i = self.newline_at(i);
            } else if c == b'/' && i + 1 < self.b.len() && self.b[i + 1] == b'/' {
                i = self.skip_line(i + 2);
            } else if c == b'/' && i + 1 < self.b.len() && self.b[i + 1] == b'*' {
                i = self.skip_slash_star(i + 2);
            } else if c == b'>' {
                return i + 1;
            } else {
                i += 1;
            }
        }
        i
    }

    fn skip_quote(&mut self, mut i: usize, endc: u8) -> usize {
        while i < self.b.len() {
            let c = self.b[i];
            if c == b'\n' || c == b'\r' {
                i = self.newline_at(i);
            } else if c == b'\\' && endc == b'"' && i + 1 < self.b.len() {
                if self.b[i + 1] == b'<' {
                    i = self.skip_backslash_angle(i + 2);
                } else if self.b[i + 1] == b'\n' || self.b[i + 1] == b'\r' {
                    i = self.newline_at(i + 1);
                } else {
                    i += 2;
                }
            } else if c == endc {
                return i + 1;
            } else {
                i += 1;
            }
        }
        i
    }

    /// `# line N "file"` / `# N "file"` directives at line start.
    fn process_line_directive(&mut self, mut i: usize) -> Result<usize, ()> {
        let b = self.b;
        i += 1;
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        if i + 4 < b.len() && &b[i..i + 4] == b"line" && (b[i + 4] == b' ' || b[i + 4] == b'\t') {
            i += 5;
            while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
                i += 1;
            }
        }
        if i >= b.len() || !b[i].is_ascii_digit() {
            self.pos = self.skip_line(i);
            return Err(());
        }
        let mut n: u32 = 0;
        while i < b.len() && b[i].is_ascii_digit() {
            n = n.saturating_mul(10).saturating_add(u32::from(b[i] - b'0'));
            i += 1;
        }
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        if i < b.len() && b[i] == b'"' {
            let first = i;
            i += 1;
            while i < b.len() && b[i] != b'"' && b[i] != b'\n' && b[i] != b'\r' {
                if b[i] == b'\\' && i + 1 < b.len() && b[i + 1] != b'\n' && b[i + 1] != b'\r' {
                    i += 1;
                }
                i += 1;
            }
            let mut q = String::from_utf8_lossy(&b[first..i.min(b.len())]).into_owned();
            q.push('"');
            let f = crate::args::unquote(&q);
            self.file = if f.is_empty() {
                self.original_file.clone()
            } else {
                f
            };
        }
        while i < b.len() && b[i] != b'\n' && b[i] != b'\r' {
            i += 1;
        }
        if i < b.len() {
            i = self.newline_at(i);
        }
        self.line = n;
        Ok(i)
    }

    fn tok(&self, kind: Kind, start: usize, end: usize, line: u32, col: u32) -> Token {
        Token {
            kind,
            text: self.src.get(start..end).unwrap_or("").to_string(),
            file: self.file.clone(),
            line,
            col,
        }
    }

    /// Returns the next token; `bad_directive` is set when an unknown
    /// preprocessor directive was skipped.
    pub fn next(&mut self, bad_directive: &mut bool) -> Token {
        let b = self.b;
        let mut s = self.pos;
        loop {
            while s < b.len() && is_space(b[s]) {
                if b[s] == b'\n' || b[s] == b'\r' {
                    s = self.newline_at(s);
                } else {
                    s += 1;
                }
            }
            if s >= b.len() {
                self.pos = b.len();
                return self.tok(Kind::Eof, s, s, self.line, self.col_at(s));
            }
            if b[s] == b'/' && s + 1 < b.len() && b[s + 1] == b'/' {
                s = self.skip_line(s + 2);
            } else if b[s] == b'/' && s + 1 < b.len() && b[s + 1] == b'*' {
                s = self.skip_slash_star(s + 2);
            } else if b[s] == b'#' && (s == 0 || b[s - 1] == b'\n' || b[s - 1] == b'\r') {
                match self.process_line_directive(s) {
                    Ok(e) => s = e,
                    Err(()) => {
                        *bad_directive = true;
                        s = self.pos;
                    }
                }
            } else {
                break;
            }
        }
        let line = self.line;
        let col = self.col_at(s);
        let start = s;
        if is_word_byte(b[s]) {
            s += 1;
            loop {
                while s < b.len() && is_word_byte(b[s]) {
                    s += 1;
                }
                if s + 1 < b.len() && b[s] == b'/' && is_word_byte(b[s + 1]) {
                    s += 1;
                    continue;
                }
                break;
            }
            self.pos = s;
            let kind = match &self.src[start..s] {
                "elementclass" => Kind::ElementClass,
                "require" => Kind::Require,
                "define" => Kind::Define,
                _ => Kind::Ident,
            };
            return self.tok(kind, start, s, line, col);
        }
        if b[s] == b'$' {
            let mut e = s + 1;
            while e < b.len() && (b[e].is_ascii_alphanumeric() || b[e] == b'_') {
                e += 1;
            }
            self.pos = e;
            return self.tok(Kind::Variable, s + 1, e, line, col);
        }
        if s + 1 < b.len() {
            let two = &b[s..s + 2];
            let k = match two {
                b"->" => Some(Kind::Arrow),
                b"=>" => Some(Kind::TwoArrow),
                b"::" => Some(Kind::TwoColon),
                b"||" => Some(Kind::TwoBar),
                _ => None,
            };
            if let Some(k) = k {
                self.pos = s + 2;
                return self.tok(k, s, s + 2, line, col);
            }
        }
        if s + 2 < b.len() && &b[s..s + 3] == b"..." {
            self.pos = s + 3;
            return self.tok(Kind::ThreeDot, s, s + 3, line, col);
        }
        // one character (a whole UTF-8 sequence)
        let c = self.src[s..].chars().next().unwrap_or('\u{fffd}');
        self.pos = s + c.len_utf8();
        self.tok(Kind::Char(c), s, self.pos, line, col)
    }

    /// Click's `lex_config`: raw text up to the matching `)` (which is not
    /// consumed).  Parentheses inside quotes and comments don't count.
    pub fn lex_config(&mut self) -> String {
        let b = self.b;
        let mut start = self.pos;
        let mut s = self.pos;
        let mut depth = 1u32;
        // text before line directives inside the parentheses, which (as in
        // Click) are processed and left out
        let mut out = String::new();
        while s < b.len() {
            match b[s] {
                b'#' if s > 0 && (b[s - 1] == b'\n' || b[s - 1] == b'\r') => {
                    out.push_str(&String::from_utf8_lossy(&b[start..s]));
                    s = match self.process_line_directive(s) {
                        Ok(i) => i,
                        Err(()) => self.pos,
                    };
                    start = s;
                }
                b'(' => {
                    depth += 1;
                    s += 1;
                }
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                    s += 1;
                }
                b'\n' | b'\r' => s = self.newline_at(s),
                b'/' if s + 1 < b.len() && b[s + 1] == b'/' => s = self.skip_line(s + 2),
                b'/' if s + 1 < b.len() && b[s + 1] == b'*' => s = self.skip_slash_star(s + 2),
                q @ (b'\'' | b'"') => s = self.skip_quote(s + 1, q),
                b'\\' if s + 1 < b.len() && b[s + 1] == b'<' => {
                    s = self.skip_backslash_angle(s + 2)
                }
                _ => s += 1,
            }
        }
        let s = s.min(b.len());
        self.pos = s;
        match self.src.get(start..s) {
            Some(x) => out.push_str(x),
            None => out.push_str(&String::from_utf8_lossy(&b[start..s])),
        }
        out
    }
}
