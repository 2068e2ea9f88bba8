//! Protocol errors of the service: JSON bodies with a stable code.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// The stable code of a protocol error; clients branch on it, never on the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ErrorCode {
    /// 400: an unknown query parameter or a bad value.
    BadQuery,
    /// 400: the body could not be read: cut short, broken chunking, or (for `application/json`) not UTF-8.
    UnreadableBody,
    /// 404: no such route.
    NotFound,
    /// 404: `GET /v1/schema/events/{t}` for a `t` that is no event.
    UnknownEvent,
    /// 405: the route exists but not with this method (the `Allow` header lists the methods).
    MethodNotAllowed,
    /// 408: the request did not complete within the deadline.
    Timeout,
    /// 413: the body is larger than `--max-body`.
    BodyTooLarge,
    /// 415: the content type is neither `application/json` nor `application/x-ndjson`.
    UnsupportedMediaType,
    /// 503: too many requests in flight; retry (the `Retry-After` header says when).
    Overloaded,
}

impl ErrorCode {
    /// Every code, in catalogue order.
    pub const ALL: &'static [ErrorCode] = &[
        ErrorCode::BadQuery,
        ErrorCode::UnreadableBody,
        ErrorCode::NotFound,
        ErrorCode::UnknownEvent,
        ErrorCode::MethodNotAllowed,
        ErrorCode::Timeout,
        ErrorCode::BodyTooLarge,
        ErrorCode::UnsupportedMediaType,
        ErrorCode::Overloaded,
    ];

    /// The code as it appears in bodies.
    pub fn id(self) -> &'static str {
        match self {
            ErrorCode::BadQuery => "bad-query",
            ErrorCode::UnreadableBody => "unreadable-body",
            ErrorCode::NotFound => "not-found",
            ErrorCode::UnknownEvent => "unknown-event",
            ErrorCode::MethodNotAllowed => "method-not-allowed",
            ErrorCode::Timeout => "timeout",
            ErrorCode::BodyTooLarge => "body-too-large",
            ErrorCode::UnsupportedMediaType => "unsupported-media-type",
            ErrorCode::Overloaded => "overloaded",
        }
    }

    /// The HTTP status that carries it.
    pub fn status(self) -> StatusCode {
        match self {
            ErrorCode::BadQuery | ErrorCode::UnreadableBody => StatusCode::BAD_REQUEST,
            ErrorCode::NotFound | ErrorCode::UnknownEvent => StatusCode::NOT_FOUND,
            ErrorCode::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ErrorCode::Timeout => StatusCode::REQUEST_TIMEOUT,
            ErrorCode::BodyTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
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
        match self.code {
            ErrorCode::Overloaded => {
                r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            // The rest of the body is not read: the connection cannot be reused.
            ErrorCode::BodyTooLarge | ErrorCode::UnreadableBody | ErrorCode::Timeout => {
                r.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            _ => {}
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
