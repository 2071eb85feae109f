// rsocket-js 1.0.0-alpha.3 (npm rsocket-core, rsocket-tcp-server) serving the kit's RSocket test publishers
// (bindings.md section 2).
// Usage: node server.js PORT   (or RSIO_PORT=PORT); listens on 127.0.0.1 only.
// Shaped like every interop server: parse the publisher name, one iterator of elements per publisher, then
// one handler per interaction. The 1.0 API has no reactive library: a request-stream handler returns a
// Requestable, and emits only what request(n) (and the initial request N) asked for.
'use strict';
const {RSocketServer} = require('rsocket-core');
const {TcpServerTransport} = require('rsocket-tcp-server');

const PARAMS = {
  'tck/range': ['start', 'count'], 'tck/infinite': ['start'], 'tck/error': ['after', 'message'],
  'tck/large': ['size', 'count', 'part'], 'tck/fnf': ['key'], 'tck/fnf-count': ['key'], 'tck/echo': [],
};
const fnfCounts = new Map(); // fire-and-forget calls per key, for the whole server

// 'tck/range?start=1&count=2' -> ['tck/range', {start: '1', count: '2'}]; throws if not served.
function parseName(text) {
  const [path, query] = [text.split('?')[0], text.split('?').slice(1).join('?')];
  if (!(path in PARAMS)) throw new Error(`no test publisher '${path}'`);
  const params = {};
  for (const pair of query ? query.split('&') : []) {
    const eq = pair.indexOf('=');
    const key = pair.slice(0, eq);
    if (eq < 0 || !PARAMS[path].includes(key) || key in params) {
      throw new Error(`bad parameter '${pair}' for ${path}`);
    }
    params[key] = decodeURIComponent(pair.slice(eq + 1));
  }
  return [path, params];
}

function number(params, key, fallback) {
  const value = key in params ? params[key] : fallback;
  if (value === undefined || !/^-?\d+$/.test(String(value))) throw new Error(`parameter ${key}=${value} is not an integer`);
  return Number(value);
}

// A start value as a BigInt: starts reach 2^63-1 (rsio-v0 section 8), beyond a Number's 2^53.
function bigNumber(params, key, fallback) {
  number(params, key, fallback);
  return BigInt(key in params ? params[key] : fallback);
}

// tck/large element `index`: byte j is (index + j) mod 256.
function largeElement(index, size) {
  const bytes = Buffer.alloc(size);
  for (let j = 0; j < size; j++) bytes[j] = (index + j) % 256;
  return bytes;
}

// An iterator over the publisher's elements as Buffers; parameters are checked before it is returned.
function elements(path, params) {
  const text = (i) => Buffer.from(String(i));
  if (path === 'tck/range') {
    const start = bigNumber(params, 'start', 0), count = bigNumber(params, 'count', 0);
    return (function* () { for (let i = start; i < start + count; i++) yield text(i); })();
  }
  if (path === 'tck/infinite') {
    const start = bigNumber(params, 'start', 0);
    return (function* () { for (let i = start; ; i++) yield text(i); })();
  }
  if (path === 'tck/large') {
    const size = number(params, 'size'), count = number(params, 'count', 0);
    return (function* () { for (let i = 0; i < count; i++) yield largeElement(i, size); })();
  }
  if (path === 'tck/error') {
    const after = number(params, 'after', 0), message = params.message || 'failed';
    return (function* () { for (let i = 0; i < after; i++) yield text(i); throw new Error(message); })();
  }
  throw new Error(`${path} is not a request-stream publisher`);
}

// Elements sent per turn of Node's event loop: a large demand is served in turns, so that a CANCEL, and the
// other connections, are read in between (a request(n) returns in a timely manner: Reactive Streams 3.4).
const BATCH = 256;

// Serves an iterator to a responder stream: at most the outstanding demand; the last element carries
// completion (N+C), an error ends the stream with ERROR.
function serve(iterator, initialRequestN, stream) {
  let pending, cancelled = false, demand = 0, ended = false;
  const advance = () => { try { pending = iterator.next(); } catch (error) { pending = {error}; } };
  let scheduled = false;
  const drain = () => {
    scheduled = false;
    let batch = BATCH;
    while (!cancelled && !ended && demand > 0 && !pending.done && !pending.error && batch-- > 0) {
      demand--;
      const value = pending.value;
      advance();
      ended = Boolean(pending.done);
      stream.onNext({data: value}, ended);
    }
    if (cancelled || ended) return;
    if (batch < 0 && demand > 0) { if (!scheduled) { scheduled = true; setImmediate(drain); } return; }
    if (pending.error) { ended = true; stream.onError(pending.error); }
    else if (pending.done) { ended = true; stream.onComplete(); }
  };
  advance();
  demand = initialRequestN;
  setImmediate(drain); // after the handler has returned its Requestable
  return {
    request: (n) => { demand += n; drain(); },
    cancel: () => { cancelled = true; },
    onExtension: () => {},
  };
}

// tck/echo: every inbound payload after the first (the name) goes back out under the requester's demand;
// one more inbound payload is requested each time one has been sent back.
function echo(name, initialRequestN, isCompleted, stream) {
  if (name !== 'tck/echo') {
    stream.onError(new Error(`no channel publisher '${name}'`));
    return {onNext() {}, onError() {}, onComplete() {}, onExtension() {}, request() {}, cancel() {}};
  }
  const queue = [];
  let demand = initialRequestN, inboundDone = isCompleted, ended = false;
  const drain = () => {
    while (!ended && demand > 0 && queue.length > 0) {
      demand--;
      stream.onNext({data: queue.shift()}, false);
      if (!inboundDone) stream.request(1);
    }
    if (!ended && inboundDone && queue.length === 0) { ended = true; stream.onComplete(); }
  };
  if (!isCompleted) stream.request(1);
  setImmediate(drain);
  return {
    onNext: (payload, isComplete) => { queue.push(payload.data); inboundDone = isComplete; drain(); },
    onComplete: () => { inboundDone = true; drain(); },
    onError: () => { ended = true; },
    onExtension: () => {},
    request: (n) => { demand += n; drain(); },
    cancel: () => { ended = true; },
  };
}

const responder = {
  requestStream(payload, initialRequestN, stream) {
    try {
      const [path, params] = parseName(payload.data.toString());
      return serve(elements(path, params), initialRequestN, stream);
    } catch (error) {
      stream.onError(error);
      return {request() {}, cancel() {}, onExtension() {}};
    }
  },
  requestResponse(payload, stream) {
    try {
      const [path, params] = parseName(payload.data.toString());
      if (path === 'tck/fnf-count') {
        stream.onNext({data: Buffer.from(String(fnfCounts.get(params.key || '') || 0))}, true);
      } else {
        const first = elements(path, params).next();
        if (first.done) stream.onComplete(); // empty publisher: empty completion
        else stream.onNext({data: first.value}, true);
      }
    } catch (error) {
      stream.onError(error);
    }
    return {cancel() {}, onExtension() {}};
  },
  fireAndForget(payload, stream) {
    const [path, params] = parseName(payload.data.toString());
    if (path === 'tck/fnf') fnfCounts.set(params.key || '', (fnfCounts.get(params.key || '') || 0) + 1);
    stream.onComplete();
    return {cancel() {}};
  },
  requestChannel(payload, initialRequestN, isCompleted, stream) {
    return echo(payload.data.toString(), initialRequestN, isCompleted, stream);
  },
  metadataPush(metadata, stream) {
    stream.onComplete(); // ignored: the connection stays up
  },
};

const port = Number(process.argv[2] || process.env.RSIO_PORT);
const server = new RSocketServer({
  transport: new TcpServerTransport({listenOptions: {host: '127.0.0.1', port}}),
  acceptor: {accept: async () => responder},
});
server.bind().then(() => console.log(`rsocket-js-1 server listening on 127.0.0.1:${port}`));
