// rsocket-js 0.0.27 performing the client test cases of interop/testcases.json.
// Usage: RSIO_URL=tcp://127.0.0.1:PORT RSIO_TESTCASE=NAME node client.js
// Prints one line per signal ('next TEXT', 'complete', 'error TEXT'); exits 0 when the test case went as
// expected, 1 when not, 127 for a test case it does not support.
'use strict';
const {RSocketClient, BufferEncoders} = require('rsocket-core');
const RSocketTcpClient = require('rsocket-tcp-client').default;
const {Flowable} = require('rsocket-flowable');

const TIMEOUT_MS = 10000; // for a whole test case
const payload = (text) => ({data: Buffer.from(text), metadata: null});
const show = (data) => (data.length > 64 ? `next ${data.length} bytes` : `next ${data.toString()}`);

function largeCheck(index, data) {
  let good = true;
  for (let j = 0; j < data.length; j++) if (data[j] !== (index + j) % 256) good = false;
  return `next ${data.length} bytes ${good ? 'ok' : 'BAD'}`;
}

// Subscribes to a request-stream (or channel) Flowable: requests `initial`, then `batch` more after each
// `batch` elements; cancels after `take` elements. Resolves with the printed lines.
function consume(flowable, {initial, batch, take, check}) {
  return new Promise((resolve) => {
    const lines = [];
    let count = 0, subscription;
    flowable.subscribe({
      onSubscribe: (s) => { subscription = s; s.request(initial); },
      onNext: (p) => {
        lines.push(check ? check(count, p.data) : show(p.data));
        count++;
        if (take !== undefined && count === take) {
          subscription.cancel();
          setTimeout(() => resolve(lines), 500); // elements after the cancel would show up here
        } else if (batch && count % batch === 0) subscription.request(batch);
      },
      onComplete: () => { lines.push('complete'); resolve(lines); },
      onError: (error) => { lines.push(`error ${(error.source || error).message}`); resolve(lines); },
    });
  });
}

function response(socket, name) {
  return new Promise((resolve) => socket.requestResponse(payload(name)).subscribe({
    onComplete: (p) => resolve([show(p.data)]),
    onError: (error) => resolve([`error ${(error.source || error).message}`]),
  }));
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
  'stream-range': [(s) => consume(s.requestStream(payload('tck/range?count=10')), {initial: 3, batch: 3}),
    [...range10, 'complete']],
  'request-response': [(s) => response(s, 'tck/range?start=7&count=1'), ['next 7']],
  'fnf': [(s) => {
    for (let i = 0; i < 3; i++) s.fireAndForget(payload('tck/fnf?key=interop'));
    return countOf(s, 'next 3');
  }, ['next 3']],
  // keepalive: idle past the max lifetime (the SETUP below): keepalives alone keep the connection.
  'keepalive': [async (s) => {
    await new Promise((resolve) => setTimeout(resolve, 2500));
    return response(s, 'tck/range?start=7&count=1');
  }, ['next 7']],
  'channel-echo': [(s) => consume(s.requestChannel(Flowable.just(payload('tck/echo'), payload('a'), payload('b'),
    payload('c'))), {initial: 1, batch: 1}), ['next a', 'next b', 'next c', 'complete']],
  'cancel-infinite': [(s) => consume(s.requestStream(payload('tck/infinite')), {initial: 5, take: 5}),
    range10.slice(0, 5)],
  'large-fragmented': [(s) => consume(s.requestStream(payload('tck/large?size=100000&count=3')),
    {initial: 3, check: largeCheck}), [...Array(3).fill('next 100000 bytes ok'), 'complete']],
  'error': [(s) => consume(s.requestStream(payload('tck/error?after=2')), {initial: 10}),
    ['next 0', 'next 1', 'error failed']],
  'metadata-push': [(s) => new Promise((resolve) => s.metadataPush({data: null, metadata: Buffer.from('tck')})
    .subscribe({onComplete: resolve, onError: resolve})).then(() => response(s, 'tck/range?count=1')), ['next 0']],
};

const name = process.env.RSIO_TESTCASE || '';
if (!(name in TESTCASES)) {
  console.error(`unsupported test case '${name}'`);
  process.exit(127);
}
const url = new URL(process.env.RSIO_URL);
const client = new RSocketClient({
  // keepalive: every 200 ms, a max lifetime of 2 s; otherwise 30 s and 90 s.
  setup: {keepAlive: name === 'keepalive' ? 200 : 30000, lifetime: name === 'keepalive' ? 2000 : 90000,
    dataMimeType: 'text/plain', metadataMimeType: 'application/octet-stream'},
  transport: new RSocketTcpClient({host: url.hostname, port: Number(url.port)}, BufferEncoders),
});
const timer = setTimeout(() => { console.log('timeout'); process.exit(1); }, TIMEOUT_MS);
client.connect().subscribe({
  onComplete: async (socket) => {
    const [perform, expected] = TESTCASES[name];
    const lines = await perform(socket);
    console.log(lines.join('\n'));
    clearTimeout(timer);
    client.close();
    process.exit(JSON.stringify(lines) === JSON.stringify(expected) ? 0 : 1);
  },
  onError: (error) => { console.log(`error ${error.message}`); process.exit(1); },
});
