// rsocket-js 0.0.27 (npm rsocket-core, rsocket-tcp-server, rsocket-flowable) serving the kit's RSocket
// test publishers (bindings.md section 2).
// Usage: node server.js PORT   (or RSIO_PORT=PORT); listens on 127.0.0.1 only.
// Shaped like every interop server: parse the publisher name, one iterator of elements per publisher,
// then one handler per interaction. Request-stream is a Flowable that emits only what request(n) asked.
'use strict';
const {RSocketServer, BufferEncoders} = require('rsocket-core');
const RSocketTCPServer = require('rsocket-tcp-server').default;
const {Flowable, Single} = require('rsocket-flowable');

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

// A Flowable over an iterator: emits at most the outstanding demand, and ends as soon as the iterator does.
function flowableOf(iterator) {
  return new Flowable((subscriber) => {
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
        subscriber.onNext({data: value, metadata: null});
      }
      if (cancelled || ended) return;
      if (batch < 0 && demand > 0) { if (!scheduled) { scheduled = true; setImmediate(drain); } return; }
      if (pending.error) { ended = true; subscriber.onError(pending.error); }
      else if (pending.done) { ended = true; subscriber.onComplete(); }
    };
    advance();
    subscriber.onSubscribe({
      request: (n) => { demand += n; drain(); },
      cancel: () => { cancelled = true; },
    });
  });
}

// tck/echo: inbound payloads after the first (the name) go back out; outbound demand becomes inbound demand.
function echo(inbound) {
  return new Flowable((subscriber) => {
    let subscription, first = true;
    inbound.subscribe({
      onSubscribe: (s) => { subscription = s; },
      onNext: (payload) => {
        if (first && payload.data.toString() !== 'tck/echo') {
          subscription.cancel();
          subscriber.onError(new Error(`no channel publisher '${payload.data}'`));
        } else if (first) first = false;
        else subscriber.onNext({data: payload.data, metadata: null});
      },
      onComplete: () => subscriber.onComplete(),
      onError: (error) => subscriber.onError(error),
    });
    subscriber.onSubscribe({
      request: (n) => { subscription.request(first ? n + 1 : n); },
      cancel: () => subscription.cancel(),
    });
  });
}

const handler = {
  requestStream(payload) {
    try {
      const [path, params] = parseName(payload.data.toString());
      return flowableOf(elements(path, params));
    } catch (error) {
      return Flowable.error(error);
    }
  },
  requestResponse(payload) {
    try {
      const [path, params] = parseName(payload.data.toString());
      if (path === 'tck/fnf-count') return Single.of({data: Buffer.from(String(fnfCounts.get(params.key || '') || 0)), metadata: null});
      const first = elements(path, params).next();
      // Single has no empty completion: an empty publisher answers an empty element (NOTES.md).
      return Single.of({data: first.done ? Buffer.alloc(0) : first.value, metadata: null});
    } catch (error) {
      return Single.error(error);
    }
  },
  fireAndForget(payload) {
    const [path, params] = parseName(payload.data.toString());
    if (path === 'tck/fnf') fnfCounts.set(params.key || '', (fnfCounts.get(params.key || '') || 0) + 1);
  },
  requestChannel(payloads) {
    return echo(payloads);
  },
  metadataPush() {
    return Single.of(); // ignored: the connection stays up
  },
};

const port = Number(process.argv[2] || process.env.RSIO_PORT);
const server = new RSocketServer({
  getRequestHandler: () => handler,
  transport: new RSocketTCPServer({host: '127.0.0.1', port}, BufferEncoders),
});
server.start();
console.log(`rsocket-js-0 server listening on 127.0.0.1:${port}`);
