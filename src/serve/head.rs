//! A request head read with httparse: complete, still coming, or refused with a status.

/// A request as a handler sees it: GET or HEAD, its path and its query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub path: String,
    /// What follows `?`, as sent.
    pub query: Option<String>,
}

/// What the bytes read so far make of a request head.
#[derive(Debug, PartialEq, Eq)]
pub enum Head {
    /// Not complete yet, and not too long.
    Partial,
    /// A GET (`false`) or HEAD (`true`) request.
    Get(Request, bool),
    /// Answered at once with this status: 400 unreadable, 405 another method, 431 too long.
    Refused(u16),
}

/// The most headers a request may carry.
const MAX_HEADERS: usize = 64;

/// Reads `bytes` as a request head of at most `limit` bytes.
pub fn read_head(bytes: &[u8], limit: usize) -> Head {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(bytes) {
        Ok(httparse::Status::Partial) if bytes.len() > limit => Head::Refused(431),
        Ok(httparse::Status::Partial) => Head::Partial,
        Ok(httparse::Status::Complete(length)) if length > limit => Head::Refused(431),
        Ok(httparse::Status::Complete(_)) => {
            let head_only = match request.method {
                Some("GET") => false,
                Some("HEAD") => true,
                _ => return Head::Refused(405),
            };
            let target = origin_form(request.path.unwrap_or("/"));
            let (path, query) = match target.split_once('?') {
                Some((path, query)) => (path, Some(query.to_string())),
                None => (target, None),
            };
            Head::Get(
                Request {
                    path: path.to_string(),
                    query,
                },
                head_only,
            )
        }
        Err(httparse::Error::TooManyHeaders) => Head::Refused(431),
        Err(_) => Head::Refused(400),
    }
}

/// The target's path and query: the absolute form (`http://host/metrics`, which a server
/// must accept, RFC 9112 3.2.2) without its scheme and host; any other form as it is.
fn origin_form(target: &str) -> &str {
    let scheme = target
        .get(..8)
        .filter(|s| s.eq_ignore_ascii_case("https://"))
        .or_else(|| {
            target
                .get(..7)
                .filter(|s| s.eq_ignore_ascii_case("http://"))
        });
    let Some(scheme) = scheme else {
        return target;
    };
    let rest = &target[scheme.len()..];
    match rest.find(['/', '?']) {
        Some(at) if rest.as_bytes()[at] == b'/' => &rest[at..],
        // No path: `/` (a query straight after the host is not one any path here reads).
        Some(_) | None => "/",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(path: &str, query: Option<&str>) -> Head {
        Head::Get(
            Request {
                path: path.to_string(),
                query: query.map(str::to_string),
            },
            false,
        )
    }

    #[test]
    fn heads_are_read_refused_or_awaited() {
        let limit = 1024;
        assert_eq!(
            read_head(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", limit),
            get("/metrics", None)
        );
        assert_eq!(
            read_head(b"GET /explain?pair=Waiting/Crashed HTTP/1.0\r\n\r\n", limit),
            get("/explain", Some("pair=Waiting/Crashed"))
        );
        assert!(matches!(
            read_head(b"HEAD / HTTP/1.1\r\n\r\n", limit),
            Head::Get(_, true)
        ));
        assert_eq!(
            read_head(b"GET /metrics HTTP/1.1\r\nHost:", limit),
            Head::Partial
        );
        assert_eq!(read_head(b"", limit), Head::Partial);
        assert_eq!(
            read_head(b"POST / HTTP/1.1\r\n\r\n", limit),
            Head::Refused(405)
        );
        assert_eq!(
            read_head(b"\x00\x01garbage\r\n\r\n", limit),
            Head::Refused(400)
        );
        assert_eq!(
            read_head(b"GET http://10.0.0.1:9119/metrics HTTP/1.1\r\n\r\n", limit),
            get("/metrics", None)
        );
        assert_eq!(
            read_head(b"GET HTTPS://h/explain?pair=a/b HTTP/1.1\r\n\r\n", limit),
            get("/explain", Some("pair=a/b"))
        );
        assert_eq!(
            read_head(b"GET http://h HTTP/1.1\r\n\r\n", limit),
            get("/", None)
        );
        assert_eq!(read_head(b"GET * HTTP/1.1\r\n\r\n", limit), get("*", None));
        let long = format!("GET / HTTP/1.1\r\nX: {}", "a".repeat(2000));
        assert_eq!(read_head(long.as_bytes(), limit), Head::Refused(431));
        let many: String = (0..100).map(|n| format!("X-{n}: y\r\n")).collect();
        let many = format!("GET / HTTP/1.1\r\n{many}\r\n");
        assert_eq!(read_head(many.as_bytes(), 1 << 20), Head::Refused(431));
    }
}
