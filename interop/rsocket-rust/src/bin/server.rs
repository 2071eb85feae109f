//! rsocket-rust 0.7.5 (crates rsocket_rust, rsocket_rust_transport_tcp) serving the kit's RSocket test
//! publishers (bindings.md section 2).
//! Usage: server PORT (or RSIO_PORT=PORT); listens on 127.0.0.1 only.
//! Shaped like every interop server: parse the publisher name, one lazy iterator of elements per publisher,
//! then one handler per interaction. Request-stream returns rsocket-rust's Flux (a futures Stream), as its
//! documentation shows; how far it is polled is up to rsocket-rust (that is what the kit tests).
use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use rsocket_rust::prelude::*;
use rsocket_rust::{async_trait, stream, Result};
use rsocket_rust_transport_tcp::TcpServerTransport;

static FNF_COUNTS: LazyLock<Mutex<HashMap<String, u64>>> = LazyLock::new(Default::default);

fn allowed(path: &str) -> Option<&'static [&'static str]> {
    Some(match path {
        "tck/range" => &["start", "count"],
        "tck/infinite" => &["start"],
        "tck/error" => &["after", "message"],
        "tck/large" => &["size", "count", "part"],
        "tck/fnf" | "tck/fnf-count" => &["key"],
        "tck/echo" => &[],
        _ => return None,
    })
}

/// "tck/range?start=1&count=2" -> ("tck/range", {start: 1, count: 2}); an error if not served.
fn parse_name(text: &str) -> anyhow::Result<(String, HashMap<String, String>)> {
    let (path, query) = text.split_once('?').unwrap_or((text, ""));
    let keys = allowed(path).ok_or_else(|| anyhow::anyhow!("no test publisher '{}'", path))?;
    let mut params = HashMap::new();
    for pair in query.split('&').filter(|_| !query.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let decoded = percent_decode(value);
        if !pair.contains('=') || !keys.contains(&key) || params.contains_key(key) || decoded.is_none() {
            anyhow::bail!("bad parameter '{}' for {}", pair, path);
        }
        params.insert(key.to_string(), decoded.unwrap());
    }
    Ok((path.to_string(), params))
}

fn percent_decode(text: &str) -> Option<String> {
    let (bytes, mut out, mut i) = (text.as_bytes(), Vec::new(), 0);
    while i < bytes.len() {
        if bytes[i] == b'%' {
            out.push(u8::from_str_radix(text.get(i + 1..i + 3)?, 16).ok()?);
            i += 3;
        } else {
            out.push(if bytes[i] == b'+' { b' ' } else { bytes[i] });
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn number(params: &HashMap<String, String>, key: &str, default: Option<i64>) -> anyhow::Result<i64> {
    match (params.get(key), default) {
        (Some(text), _) => text.parse().map_err(|_| anyhow::anyhow!("parameter {}={} is not an integer", key, text)),
        (None, Some(value)) => Ok(value),
        (None, None) => anyhow::bail!("parameter {} is required", key),
    }
}

/// tck/large element `index`: byte j is (index + j) mod 256.
fn large_element(index: i64, size: i64) -> Vec<u8> {
    (0..size).map(|j| ((index + j) % 256) as u8).collect()
}

type Elements = Box<dyn Iterator<Item = Result<Vec<u8>>> + Send>;

/// The publisher's elements, lazily; tck/error ends with its error. Parameters are checked first.
fn elements(path: &str, p: &HashMap<String, String>) -> anyhow::Result<Elements> {
    let text = |i: i64| Ok(i.to_string().into_bytes());
    Ok(match path {
        "tck/range" => {
            let (start, count) = (number(p, "start", Some(0))?, number(p, "count", Some(0))?);
            Box::new((start..start + count).map(text))
        }
        "tck/infinite" => Box::new((number(p, "start", Some(0))?..).map(text)),
        "tck/large" => {
            let (size, count) = (number(p, "size", None)?, number(p, "count", Some(0))?);
            Box::new((0..count).map(move |i| Ok(large_element(i, size))))
        }
        "tck/error" => {
            let message = p.get("message").cloned().unwrap_or_else(|| "failed".to_string());
            let failure = std::iter::once_with(move || Err(anyhow::anyhow!(message)));
            Box::new((0..number(p, "after", Some(0))?).map(text).chain(failure))
        }
        _ => anyhow::bail!("{} is not a request-stream publisher", path),
    })
}

fn data(payload: &Payload) -> String {
    payload.data_utf8().unwrap_or("").to_string()
}

struct Handler;

#[async_trait]
impl RSocket for Handler {
    async fn metadata_push(&self, _req: Payload) -> Result<()> {
        Ok(()) // ignored: the connection stays up
    }

    async fn fire_and_forget(&self, req: Payload) -> Result<()> {
        let (path, params) = parse_name(&data(&req))?;
        if path == "tck/fnf" {
            *FNF_COUNTS.lock().unwrap().entry(params.get("key").cloned().unwrap_or_default()).or_default() += 1;
        }
        Ok(())
    }

    async fn request_response(&self, req: Payload) -> Result<Option<Payload>> {
        let (path, params) = parse_name(&data(&req))?;
        if path == "tck/fnf-count" {
            let count = FNF_COUNTS.lock().unwrap().get(params.get("key").map_or("", |k| k)).copied();
            return Ok(Some(Payload::builder().set_data_utf8(&count.unwrap_or(0).to_string()).build()));
        }
        // The first element; None is the empty completion.
        match elements(&path, &params)?.next().transpose()? {
            Some(first) => Ok(Some(Payload::builder().set_data(first).build())),
            None => Ok(None),
        }
    }

    fn request_stream(&self, req: Payload) -> Flux<Result<Payload>> {
        let items = parse_name(&data(&req)).and_then(|(path, params)| elements(&path, &params));
        Box::pin(stream! {
            match items {
                Err(e) => yield Err(e),
                Ok(items) => for item in items {
                    yield item.map(|bytes| Payload::builder().set_data(bytes).build());
                },
            }
        })
    }

    fn request_channel(&self, mut reqs: Flux<Result<Payload>>) -> Flux<Result<Payload>> {
        // tck/echo: the first inbound payload is the name; every later one is sent back.
        Box::pin(stream! {
            let mut first = true;
            while let Some(item) = reqs.next().await {
                match item {
                    Ok(p) if first && data(&p) != "tck/echo" => {
                        yield Err(anyhow::anyhow!("no channel publisher '{}'", data(&p)));
                        break;
                    }
                    Ok(_) if first => first = false,
                    other => yield other,
                }
            }
        })
    }
}

#[tokio::main]
async fn main() -> Result<()> {
    let port = std::env::args().nth(1).or_else(|| std::env::var("RSIO_PORT").ok()).expect("usage: server PORT");
    let address = format!("127.0.0.1:{}", port);
    RSocketFactory::receive()
        .transport(TcpServerTransport::from(address.as_str()))
        .acceptor(Box::new(|_setup, _socket| Ok(Box::new(Handler))))
        .on_start(Box::new(move || println!("rsocket-rust server listening on {}", address)))
        .serve()
        .await
}
