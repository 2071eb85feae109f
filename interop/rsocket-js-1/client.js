// rsocket-js 1.0.0-alpha.3 performing the client test cases of interop/testcases.json.
// Usage: RSIO_URL=tcp://127.0.0.1:PORT RSIO_TESTCASE=NAME node client.js
// Prints one line per signal ('next TEXT', 'complete', 'error TEXT'); exits 0 when the test case went as
// expected, 1 when not, 127 for a test case it does not support.
'use strict';
const {RSocketConnector} = require('rsocket-core');
const {TcpClientTransport} = require('rsocket-tcp-client');

const TIMEOUT_MS = 10000; // for a whole test case
const payload = (text) => ({data: Buffer.from(text)});
const show = (data) => (data.length > 64 ? `next ${data.length} bytes` : `next ${data.toString()}`);

function largeCheck(index, data) {
  let good = true;
  for (let j = 0; j < data.length; j++) if (data[j] !== (index + j) % 256) good = false;
  return `next ${data.length} bytes ${good ? 'ok' : 'BAD'}`;
}

// A responder-stream subscriber: requests `batch` more after each `batch` elements; cancels after `take`.
// `open(subscriber)` starts the request (with its initial request N) and returns the Requestable.
function consume(open, {batch, take, check}) {
  return new Promise((resolve) => {
    const lines = [];
    let count = 0;
    const requester = open({
      onNext: (p, isComplete) => {
        lines.push(check ? check(count, p.data) : show(p.data));
        count++;
        if (isComplete) {
          lines.push('complete');
          resolve(lines);
        } else if (take !== undefined && count === take) {
          requester.cancel();
          setTimeout(() => resolve(lines), 500); // elements after the cancel would show up here
        } else if (batch && count % batch === 0) requester.request(batch);
      },
      onComplete: () => { lines.push('complete'); resolve(lines); },
      onError: (error) => { lines.push(`error ${error.message}`); resolve(lines); },
      onExtension: () => {},
      request: (n) => sendChannel(requester, n), // channel only: the responder asks for outbound payloads
      cancel: () => {},
    });
  });
}

// The outbound half of channel-echo: a, b, c (c with completion), each only under the responder's demand.
const outbound = ['a', 'b', 'c'];
function sendChannel(requester, n) {
  for (let i = 0; i < n && outbound.length > 0; i++) {
    const text = outbound.shift();
    requester.onNext(payload(text), outbound.length === 0);
  }
}

function response(rsocket, name) {
  return new Promise((resolve) => rsocket.requestResponse(payload(name), {
    onNext: (p) => resolve([show(p.data)]),
    onComplete: () => resolve(['complete']),
    onError: (error) => resolve([`error ${error.message}`]),
    onExtension: () => {},
  }));
}

function fireAndForget(rsocket, name) {
  return new Promise((resolve) => rsocket.fireAndForget(payload(name), {onComplete: resolve, onError: resolve}));
}

// countOf asks tck/fnf-count?key=interop until it answers want, at most 10 times, 0.2 s apart: a responder
// may handle fire-and-forgets asynchronously, and nothing acknowledges them (interop/testcases.json).
async function countOf(socket, want) {
  let lines = await response(socket, 'tck/fnf-count?key=interop');
  for (let attempt = 1; attempt < 10 && lines[0] !== want; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 200)); // the poll's interval, not a synchronisation
    lines = await response(socket, 'tck/fnf-count?key=interop');
  }
  return lines;
}

const range10 = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'].map((i) => `next ${i}`);
const TESTCASES = {
  'stream-range': [(r) => consume((s) => r.requestStream(payload('tck/range?count=10'), 3, s), {batch: 3}),
    [...range10, 'complete']],
  'request-response': [(r) => response(r, 'tck/range?start=7&count=1'), ['next 7']],
  'fnf': [async (r) => {
    for (let i = 0; i < 3; i++) await fireAndForget(r, 'tck/fnf?key=interop');
    return countOf(r, 'next 3');
  }, ['next 3']],
  // keepalive: idle past the max lifetime (the SETUP below): keepalives alone keep the connection.
  'keepalive': [async (r) => {
    await new Promise((resolve) => setTimeout(resolve, 2500));
    return response(r, 'tck/range?start=7&count=1');
  }, ['next 7']],
  'channel-echo': [(r) => consume((s) => r.requestChannel(payload('tck/echo'), 1, false, s), {batch: 1}),
    ['next a', 'next b', 'next c', 'complete']],
  'cancel-infinite': [(r) => consume((s) => r.requestStream(payload('tck/infinite'), 5, s), {take: 5}),
    range10.slice(0, 5)],
  'large-fragmented': [(r) => consume((s) => r.requestStream(payload('tck/large?size=100000&count=3'), 3, s),
    {check: largeCheck}), [...Array(3).fill('next 100000 bytes ok'), 'complete']],
  'error': [(r) => consume((s) => r.requestStream(payload('tck/error?after=2'), 10, s), {}),
    ['next 0', 'next 1', 'error failed']],
  // metadata-push: not supported; 1.0.0-alpha.3's requester throws 'Method not implemented.' (exit 127).
};

async function main(name) {
  const url = new URL(process.env.RSIO_URL);
  const connector = new RSocketConnector({
    // keepalive: every 200 ms, a max lifetime of 2 s; otherwise 30 s and 90 s.
    setup: {keepAlive: name === 'keepalive' ? 200 : 30000, lifetime: name === 'keepalive' ? 2000 : 90000,
      dataMimeType: 'text/plain', metadataMimeType: 'application/octet-stream'},
    transport: new TcpClientTransport({connectionOptions: {host: url.hostname, port: Number(url.port)}}),
  });
  const rsocket = await connector.connect();
  const [perform, expected] = TESTCASES[name];
  const lines = await perform(rsocket);
  console.log(lines.join('\n'));
  rsocket.close();
  return JSON.stringify(lines) === JSON.stringify(expected) ? 0 : 1;
}

const name = process.env.RSIO_TESTCASE || '';
if (!(name in TESTCASES)) {
  console.error(`unsupported test case '${name}'`);
  process.exit(127);
}
setTimeout(() => { console.log('timeout'); process.exit(1); }, TIMEOUT_MS).unref();
main(name).then((code) => process.exit(code), (error) => { console.log(`error ${error.message}`); process.exit(1); });
