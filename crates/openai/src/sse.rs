//! Server-sent events, as OpenAI-compatible servers stream chat completions: `data:` lines,
//! events separated by blank lines, and `data: [DONE]` at the end.

/// One event of the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Data(String),
    Done,
}

/// An incremental parser: bytes in, complete events out, whatever the chunking.
#[derive(Debug, Default)]
pub struct SseParser {
    buffer: Vec<u8>,
    data: Vec<String>,
}

impl SseParser {
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Event> {
        self.buffer.extend_from_slice(bytes);
        let mut events = Vec::new();
        while let Some(end) = self.buffer.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.buffer.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                self.flush(&mut events);
            } else if let Some(value) = line.strip_prefix("data:") {
                self.data
                    .push(value.strip_prefix(' ').unwrap_or(value).to_string());
            }
            // Comments (": keep-alive"), `event:`, `id:` and `retry:` lines carry nothing
            // a chat completion needs.
        }
        events
    }

    /// Events left when the stream ends without a final blank line.
    pub fn finish(&mut self) -> Vec<Event> {
        let mut events = Vec::new();
        if !self.buffer.is_empty() {
            let rest = std::mem::take(&mut self.buffer);
            events.extend(self.push(&rest));
            events.extend(self.push(b"\n"));
        }
        self.flush(&mut events);
        events
    }

    fn flush(&mut self, events: &mut Vec<Event>) {
        if self.data.is_empty() {
            return;
        }
        let data = std::mem::take(&mut self.data).join("\n");
        events.push(if data.trim() == "[DONE]" {
            Event::Done
        } else {
            Event::Data(data)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_survive_any_chunking() {
        let stream = b": keep-alive\n\ndata: {\"a\":1}\n\ndata: {\"b\":2}\r\n\r\ndata: [DONE]\n\n";
        let expected = vec![
            Event::Data("{\"a\":1}".into()),
            Event::Data("{\"b\":2}".into()),
            Event::Done,
        ];
        for size in 1..stream.len() {
            let mut parser = SseParser::default();
            let mut events: Vec<Event> = stream.chunks(size).flat_map(|c| parser.push(c)).collect();
            events.extend(parser.finish());
            assert_eq!(events, expected, "chunks of {size}");
        }
    }

    #[test]
    fn a_last_event_without_blank_line_is_kept() {
        let mut parser = SseParser::default();
        assert!(parser.push(b"data: x").is_empty());
        assert_eq!(parser.finish(), vec![Event::Data("x".into())]);
    }
}
