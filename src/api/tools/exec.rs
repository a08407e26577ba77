//! Where a tool's REST request runs: [`Exec`]. In process (npm, the
//! Durable Object) it is [`StoreExec`], straight into [`crate::api::route`];
//! in the front Worker it is the front's own pipeline, so a tool call gets
//! the same scope check, tenancy and id directory as the HTTP request it
//! stands for.

use futures_util::future::LocalBoxFuture;
use serde_json::{json, Value};

use crate::api::services::Services;
use crate::api::{route, Ctx, Request, Response};
use crate::core::error::Error;
use crate::core::time::Millis;
use crate::store::{Backend, Store};

/// A failed tool call: the HTTP status and `{detail, code}` of the request
/// it ran as, so every front end reports the same typed error.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub status: u16,
    pub code: String,
    pub detail: String,
    /// The typed error, when it was raised in process.
    pub error: Option<Box<Error>>,
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure { status: crate::api::status_of(&e), code: e.code().to_owned(), detail: e.to_string(), error: Some(Box::new(e)) }
    }
}

impl Failure {
    /// The `{detail, code}` answer.
    pub fn response(&self) -> Response {
        Response { status: self.status, body: json!({ "detail": self.detail, "code": self.code }), raw: None, content_type: None }
    }

    /// From a REST answer that is not a success.
    pub fn from_response(status: u16, body: &Value) -> Failure {
        Failure {
            status,
            code: body["code"].as_str().unwrap_or("internal").to_owned(),
            detail: body["detail"].as_str().map_or_else(|| format!("HTTP {status}"), str::to_owned),
            error: None,
        }
    }

    /// The typed error: the one raised in process, or an upstream error
    /// carrying the answer's code and detail.
    pub fn into_error(self) -> Error {
        self.error.map(|e| *e).unwrap_or(Error::Upstream { service: "edgemem".into(), status: self.status, detail: format!("{}: {}", self.code, self.detail) })
    }
}

/// Runs the REST requests tools stand for.
pub trait Exec {
    /// One request as the caller: `path` is `/v1/...`, `query` decoded.
    fn call<'a>(&'a mut self, method: &'a str, path: String, query: Vec<(String, String)>, body: Vec<u8>) -> LocalBoxFuture<'a, Result<Value, Failure>>;

    /// The request's time.
    fn now(&self) -> Millis;

    /// Encodings, for counting tools.
    fn services(&self) -> &dyn Services;

    /// A fresh id (a ULID), for what a tool creates inside a body.
    fn new_id(&mut self) -> String;
}

/// Tools in process, over a store.
pub struct StoreExec<'a, B: Backend> {
    pub store: &'a Store<B>,
    pub now: Millis,
    pub random: &'a mut dyn FnMut() -> [u8; 10],
    pub namespace: Option<&'a str>,
    pub body_bytes_max: usize,
    pub services: &'a dyn Services,
    pub actor: &'a str,
}

/// A response's JSON body, or its failure.
pub fn into_result(resp: Response) -> Result<Value, Failure> {
    let status = resp.status;
    let body = match resp.raw {
        Some(raw) => serde_json::from_slice(&raw).map_err(|e| Failure::from(Error::Internal { detail: format!("tool answer is not JSON: {e}") }))?,
        None => resp.body,
    };
    if (200..300).contains(&status) {
        Ok(body)
    } else {
        Err(Failure::from_response(status, &body))
    }
}

impl<B: Backend> Exec for StoreExec<'_, B> {
    fn call<'a>(&'a mut self, method: &'a str, path: String, query: Vec<(String, String)>, body: Vec<u8>) -> LocalBoxFuture<'a, Result<Value, Failure>> {
        Box::pin(async move {
            let req = Request { method, path: &path, query, body: &body };
            let mut ctx = Ctx { now: self.now, random: &mut *self.random, namespace: self.namespace, body_bytes_max: self.body_bytes_max, services: self.services, vectors: None, actor: self.actor };
            match route(self.store, &req, &mut ctx).await {
                Ok(resp) => into_result(resp),
                Err(e) => Err(e.into()),
            }
        })
    }

    fn now(&self) -> Millis {
        self.now
    }

    fn services(&self) -> &dyn Services {
        self.services
    }

    fn new_id(&mut self) -> String {
        crate::core::ids::ulid(self.now, (self.random)())
    }
}
