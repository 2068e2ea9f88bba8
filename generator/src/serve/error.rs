//! Protocol errors of the service: JSON bodies with a stable code.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::catalogue::catalogue;

catalogue! {
    /// The stable code of a protocol error; clients branch on it, never on the message.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum ErrorCode {
        /// Every code, in catalogue order.
        const ALL;
        /// The code as it appears in bodies.
        fn id;
        /// The error code with this id.
        fn from_id;
        /// 400: an unknown or repeated query parameter, or a bad value.
        BadQuery = "bad-query",
        /// 400: the body could not be read: cut short, broken chunking, or (for `application/json`) not UTF-8.
        UnreadableBody = "unreadable-body",
        /// 400: an HTTP/1.1 request without exactly one `Host` field naming a host (RFC 9112 section 3.2).
        BadHost = "bad-host",
        /// 404: no such route.
        NotFound = "not-found",
        /// 404: `GET /v1/schema/events/{t}` for a `t` that is no event.
        UnknownEvent = "unknown-event",
        /// 405: the route exists but not with this method (the `Allow` header lists the methods).
        MethodNotAllowed = "method-not-allowed",
        /// 408: the request did not complete within the deadline.
        Timeout = "timeout",
        /// 413: the body is larger than `--max-body`.
        BodyTooLarge = "body-too-large",
        /// 414: the request target is longer than the service reads (8 KiB).
        UriTooLong = "uri-too-long",
        /// 431: more header fields, or more header bytes, than the service reads (100 fields, 16 KiB).
        HeadersTooLarge = "headers-too-large",
        /// 415: the content type is neither `application/json` nor `application/x-ndjson`.
        UnsupportedMediaType = "unsupported-media-type",
        /// 501: a transfer coding other than `chunked` before the final `chunked` (`Transfer-Encoding: gzip,
        /// chunked`).
        UnsupportedTransferCoding = "unsupported-transfer-coding",
        /// 501: a method HTTP does not define (`FOO`, `get`); a method the route does not take is 405.
        UnknownMethod = "unknown-method",
        /// 503: too many requests in flight; retry (the `Retry-After` header says when).
        Overloaded = "overloaded",
    }
}

impl ErrorCode {
    /// The HTTP status that carries it.
    pub fn status(self) -> StatusCode {
        match self {
            ErrorCode::BadQuery | ErrorCode::UnreadableBody | ErrorCode::BadHost => StatusCode::BAD_REQUEST,
            ErrorCode::NotFound | ErrorCode::UnknownEvent => StatusCode::NOT_FOUND,
            ErrorCode::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ErrorCode::Timeout => StatusCode::REQUEST_TIMEOUT,
            ErrorCode::BodyTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::UriTooLong => StatusCode::URI_TOO_LONG,
            ErrorCode::HeadersTooLarge => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            ErrorCode::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ErrorCode::UnsupportedTransferCoding | ErrorCode::UnknownMethod => StatusCode::NOT_IMPLEMENTED,
            ErrorCode::Overloaded => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

/// A protocol error: a code and a human message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The stable code.
    pub code: ErrorCode,
    /// What went wrong, for humans.
    pub message: String,
}

impl ApiError {
    /// An error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError { code, message: message.into() }
    }

    /// The JSON body.
    pub fn body(&self) -> String {
        serde_json::json!({"error": {"code": self.code.id(), "status": self.code.status().as_u16(), "message": self.message}})
            .to_string()
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut r =
            (self.code.status(), [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], self.body())
                .into_response();
        if self.code == ErrorCode::Overloaded {
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_error_statuses() {
        let mut ids: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.id()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), ErrorCode::ALL.len());
        assert!(ErrorCode::ALL.iter().all(|c| c.status().is_client_error() || c.status().is_server_error()));
    }

    #[test]
    fn body_is_json_with_code_and_status() {
        let e = ApiError::new(ErrorCode::BodyTooLarge, "too big");
        let v: serde_json::Value = serde_json::from_str(&e.body()).unwrap();
        assert_eq!(v["error"]["code"], "body-too-large");
        assert_eq!(v["error"]["status"], 413);
        assert_eq!(v["error"]["message"], "too big");
    }
}
