//! A buffered reader with bytes put back in front of it: what the indented cut read past the
//! piece it could vouch for.

use std::io::{self, BufRead, Read};

/// A buffered reader with bytes put back in front of it: what a fast cut read past the end
/// of an array.
pub(super) struct Pushback<R> {
    front: Vec<u8>,
    at: usize,
    /// An error met while reading ahead, raised once the bytes put back are read.
    error: Option<io::Error>,
    inner: R,
}

impl<R> Pushback<R> {
    pub(super) fn new(inner: R) -> Self {
        Pushback {
            front: Vec::new(),
            at: 0,
            error: None,
            inner,
        }
    }

    /// Puts `bytes` back, to be read before anything else, and `error` to be met after them.
    pub(super) fn put_back(&mut self, mut bytes: Vec<u8>, error: Option<io::Error>) {
        if self.at < self.front.len() {
            bytes.extend_from_slice(&self.front[self.at..]);
        }
        self.front = bytes;
        self.at = 0;
        if error.is_some() {
            self.error = error;
        }
    }
}

impl<R: BufRead> Read for Pushback<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at >= self.front.len() {
            if let Some(err) = self.error.take() {
                return Err(err);
            }
            // A buffered reader hands a large read straight through once its buffer is empty.
            return self.inner.read(buf);
        }
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Pushback<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.at < self.front.len() {
            return Ok(&self.front[self.at..]);
        }
        if let Some(err) = self.error.take() {
            return Err(err);
        }
        self.inner.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        if self.at < self.front.len() {
            self.at += amount;
            if self.at >= self.front.len() {
                self.front = Vec::new();
                self.at = 0;
            }
        } else {
            self.inner.consume(amount);
        }
    }
}
