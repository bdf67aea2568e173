/**
 * The delaying proxy against a real server: bytes pass exactly and in order under pipelining and
 * jitter, a 10 MB value makes the round trip, backpressure holds a reader that does not read,
 * disconnects and half-closes on either side pass through without harming the proxy, and close()
 * leaves nothing listening and nothing keeping a process alive. Timing is checked one way only: a
 * round trip is never shorter than the delay asked for.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { connect as connectTcp, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import {
  correctedHoldBack,
  forwardingCost,
  warmUpPings,
  measureRoundTrip,
  startLatencyProxy,
  startProxyThread,
  startRaceProxy,
  type LatencyProxy,
  type LatencyProxyOptions,
} from '../../src/server/latency-proxy.js';
import { forOneServerKind } from '../helpers/servers.js';

/** A RESP command as bytes, the way any client would send it. */
function command(...parts: (string | Buffer)[]): Buffer {
  const chunks: Buffer[] = [Buffer.from(`*${parts.length}\r\n`)];
  for (const part of parts) {
    const bytes = typeof part === 'string' ? Buffer.from(part) : part;
    chunks.push(Buffer.from(`$${bytes.length}\r\n`), bytes, Buffer.from('\r\n'));
  }
  return Buffer.concat(chunks);
}

function openSocket(proxy: LatencyProxy): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connectTcp({ host: proxy.host, port: proxy.port });
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Collects what `socket` receives until it has `length` bytes (or the peer closes). */
function receive(socket: Socket, length: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let got = 0;
    const done = (): void => {
      socket.off('data', onData);
      resolve(Buffer.concat(chunks));
    };
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      got += chunk.length;
      if (got >= length) done();
    };
    socket.on('data', onData);
    socket.once('close', done);
    socket.once('error', reject);
  });
}

/** The test's own server connection: how many clients it has, and which are the proxy's. */
async function clientCount(admin: Redis): Promise<number> {
  const info = await admin.info('clients');
  return Number(/connected_clients:(\d+)/.exec(info)?.[1]);
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await sleep(10);
  }
  assert.fail(`${what} did not happen within 5 s`);
}

const TEN_MB = 10 * 1024 * 1024;

test('a hold-back that made the round trip shorter than asked gives the shortfall back, with a margin', () => {
  assert.equal(correctedHoldBack(0.4, 2.1, 2), 0.4, 'at or above the delay: kept');
  assert.equal(correctedHoldBack(0.4, 2, 2), 0.4);
  assert.equal(correctedHoldBack(0.4, 1.88, 2), 0.23, '0.12 short, and 0.05 more');
  assert.equal(correctedHoldBack(0.1, 1.5, 2), 0, 'never below no hold-back');
  assert.equal(correctedHoldBack(0, 1.9, 2), 0, 'nothing held back: nothing to give');
});

test('a fresh proxy is warmed by 20 PINGs before its cost is measured, or half a second of them, at least 3', () => {
  assert.deepEqual([0, 0.5, 2, 25, 100, 250, 10_000].map(warmUpPings), [20, 20, 20, 20, 5, 3, 3]);
});

test("the proxy's forwarding cost: the fastest through it, less the delay and the fastest direct; never below 0 nor above the delay", () => {
  assert.equal(Math.round(forwardingCost(2.45, 0.08, 2) * 100) / 100, 0.37);
  assert.equal(Math.round(forwardingCost(0.9, 0.1, 0.5) * 100) / 100, 0.3);
  assert.equal(forwardingCost(1.9, 0.1, 2), 0, 'a fastest PING quicker than the delay: nothing to hold back');
  assert.equal(forwardingCost(9, 0.1, 0.5), 0.5, 'never more than the delay itself');
  assert.equal(forwardingCost(3, 0.1, 0), 0, 'no delay, no hold-back');
});

// The subject is the tool's own proxy, which passes bytes and never reads them as commands: what it
// checks comes out the same whichever kind answers behind it, so one kind runs it.
forOneServerKind(import.meta.url, 'latency proxy', (handle) => {
  let admin: Redis;
  let target: Pick<LatencyProxyOptions, 'targetHost' | 'targetPort'>;
  const proxies: LatencyProxy[] = [];
  const start = async (delayMs: number, jitterMs = 0): Promise<LatencyProxy> => {
    const proxy = await startLatencyProxy({ ...target, delayMs, jitterMs });
    proxies.push(proxy);
    return proxy;
  };
  before(async () => {
    admin = await connect(parseServerUrl(handle.url));
    target = { targetHost: '127.0.0.1', targetPort: handle.server.port };
  });
  after(async () => {
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await admin?.quit().catch(() => admin.disconnect());
  });

  test('10,000 pipelined SET/GET pairs with varied payloads come back byte for byte, in order, under jitter', async () => {
    const proxy = await start(1, 3);
    const requests: Buffer[] = [];
    const replies: Buffer[] = [];
    for (let i = 0; i < 10_000; i++) {
      // Empty, small, binary (CR LF and NUL included) and a few tens of kB: every kind of chunking.
      const size = i % 500 === 0 ? 40_000 + i : i % 7 === 0 ? 0 : (i * 37) % 1500;
      const payload = randomBytes(size);
      const key = `emq:{proxy-test}:${i}`;
      requests.push(command('SET', key, payload), command('GET', key));
      replies.push(Buffer.from('+OK\r\n'), Buffer.from(`$${size}\r\n`), payload, Buffer.from('\r\n'));
    }
    const expected = Buffer.concat(replies);
    const socket = await openSocket(proxy);
    const received = receive(socket, expected.length);
    // Written in uneven slices, so request boundaries and chunk boundaries never line up.
    const stream = Buffer.concat(requests);
    for (let at = 0, step = 1; at < stream.length; at += step, step = ((step * 7 + 13) % 70_000) + 1) socket.write(stream.subarray(at, at + step));
    const got = await received;
    socket.destroy();
    assert.equal(got.length, expected.length);
    assert.ok(got.equals(expected), 'the reply stream differs from what the server must have sent');
    await admin.eval("for _, k in ipairs(redis.call('KEYS', 'emq:{proxy-test}:*')) do redis.call('UNLINK', k) end return 0", 0);
  });

  test('a 10 MB value makes the round trip intact through ioredis', async () => {
    const proxy = await start(2);
    const redis = await connect(parseServerUrl(`redis://${proxy.host}:${proxy.port}`));
    try {
      const value = randomBytes(TEN_MB);
      await redis.set('emq:{proxy-test}:big', value);
      const back = await redis.getBuffer('emq:{proxy-test}:big');
      assert.ok(back?.equals(value));
      await redis.unlink('emq:{proxy-test}:big');
    } finally {
      await redis.quit();
    }
  });

  test('a reader that stops reading holds the server back (backpressure), then gets every byte', async () => {
    const proxy = await start(1);
    const size = 64 * 1024 * 1024;
    const value = randomBytes(size);
    await admin.set('emq:{proxy-test}:huge', value);
    const socket = await openSocket(proxy);
    socket.pause();
    socket.write(command('CLIENT', 'SETNAME', 'proxied-reader'));
    socket.write(command('GET', 'emq:{proxy-test}:huge'));
    // Far more than every buffer between the server and the reader together can hold: if the proxy
    // read on regardless, the server's output buffer for this client would empty in milliseconds.
    const outputBuffer = async (): Promise<number> => {
      const list = (await admin.client('LIST')) as string;
      const line = list.split('\n').find((l) => / name=proxied-reader /.test(l));
      return Number(/ omem=(\d+)/.exec(line ?? '')?.[1] ?? -1);
    };
    await until('the GET reaching the server', async () => (await outputBuffer()) > 0);
    await sleep(300);
    const held = await outputBuffer();
    assert.ok(held > 0, 'the proxy kept reading while its reader did not');
    const header = `+OK\r\n$${size}\r\n`;
    const received = receive(socket, header.length + size + 2);
    socket.resume();
    const got = await received;
    socket.destroy();
    assert.equal(got.subarray(0, header.length).toString(), header);
    assert.ok(got.subarray(header.length, header.length + size).equals(value));
    await admin.unlink('emq:{proxy-test}:huge');
  });

  test('a client that disconnects mid-reply: the server sees it go, and the proxy serves the next client', async () => {
    const proxy = await start(2);
    await admin.set('emq:{proxy-test}:big', randomBytes(TEN_MB));
    const baseline = await clientCount(admin);
    const socket = await openSocket(proxy);
    socket.write(command('GET', 'emq:{proxy-test}:big'));
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    socket.destroy();
    await until('the server dropping the proxied connection', async () => (await clientCount(admin)) === baseline);
    const next = await connect(parseServerUrl(`redis://${proxy.host}:${proxy.port}`));
    try {
      assert.equal(await next.ping(), 'PONG');
      assert.equal((await next.getBuffer('emq:{proxy-test}:big'))?.length, TEN_MB);
    } finally {
      await next.quit();
    }
    await admin.unlink('emq:{proxy-test}:big');
  });

  test('the server dropping a connection mid-reply reaches the client as a close, after the data before it', async () => {
    const proxy = await start(2);
    await admin.set('emq:{proxy-test}:big', randomBytes(TEN_MB));
    const socket = await openSocket(proxy);
    socket.write(command('CLIENT', 'SETNAME', 'to-be-killed'));
    socket.write(command('GET', 'emq:{proxy-test}:big'));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => {});
    const received = receive(socket, Number.POSITIVE_INFINITY);
    let id: string | undefined;
    await until('the GET reaching the server', async () => {
      const line = String(await admin.client('LIST'))
        .split('\n')
        .find((l) => / name=to-be-killed /.test(l));
      id = /^id=(\d+) /.exec(line ?? '')?.[1];
      return / cmd=get /.test(line ?? '');
    });
    assert.equal(await admin.client('KILL', 'ID', String(id)), 1);
    await closed;
    const got = await received;
    // The +OK of SETNAME went ahead of the kill; the 10 MB reply may or may not have left in full.
    assert.equal(got.subarray(0, 5).toString(), '+OK\r\n');
    const again = await openSocket(proxy);
    const pong = receive(again, 7);
    again.write(command('PING'));
    assert.equal((await pong).toString(), '+PONG\r\n');
    again.destroy();
    await admin.unlink('emq:{proxy-test}:big');
  });

  test('a client half-close is passed on after its bytes: the reply still comes back, then the close', async () => {
    const proxy = await start(2);
    const socket = await openSocket(proxy);
    const received = receive(socket, Number.POSITIVE_INFINITY);
    socket.end(command('ECHO', 'last words'));
    assert.equal((await received).toString(), '$10\r\nlast words\r\n');
  });

  test('every round trip takes at least the delay asked for, a fraction of a millisecond too, with and without jitter; measureRoundTrip agrees', async () => {
    for (const [delayMs, jitterMs] of [
      [0.5, 0],
      [2, 0],
      [2, 3],
    ] as const) {
      const proxy = await start(delayMs, jitterMs);
      const redis = await connect(parseServerUrl(`redis://${proxy.host}:${proxy.port}`));
      try {
        for (let i = 0; i < 20; i++) {
          const t = performance.now();
          await redis.ping();
          const rtt = performance.now() - t;
          assert.ok(rtt >= delayMs, `a round trip of ${rtt.toFixed(3)} ms through a ${delayMs} ms proxy`);
        }
        const measured = await measureRoundTrip(redis, 50);
        assert.ok(measured.median >= delayMs, `median ${measured.median}`);
        assert.ok(measured.p99 >= measured.median);
      } finally {
        await redis.quit();
      }
    }
  });

  test("the race's proxy with jitter: its own cost measured without it, so no round trip comes back sooner than the delay asked", async () => {
    // Jitter four times the delay: a hold-back measured with it on would take off the smallest
    // jitter of its 50 PINGs as well, and some round trips would come in under the delay.
    const delayMs = 2;
    const race = await startRaceProxy(parseServerUrl(handle.url), { delayMs, jitterMs: 8 }, new AbortController().signal);
    const redis = await connect(race.target);
    try {
      assert.ok(race.latency.heldBackMs < delayMs, `held back ${race.latency.heldBackMs} ms`);
      assert.ok(race.latency.measuredRttMs.median >= delayMs, `the reported round trip, jitter and all: ${race.latency.measuredRttMs.median} ms`);
      const early: string[] = [];
      for (let i = 0; i < 150; i++) {
        const t = performance.now();
        await redis.ping();
        const rtt = performance.now() - t;
        if (rtt < delayMs) early.push(rtt.toFixed(3));
      }
      assert.deepEqual(early, [], `round trips under ${delayMs} ms, with ${race.latency.heldBackMs} ms held back`);
    } finally {
      await redis.quit().catch(() => redis.disconnect());
      await race.close();
    }
  });

  test('the proxy in a thread of its own, as the race runs it: replies come back, a hold-back is taken before it resolves, close() ends the thread and nothing listens', async () => {
    const proxy = await startProxyThread({ targetHost: '127.0.0.1', targetPort: handle.server.port, delayMs: 1 });
    const redis = await connect(parseServerUrl(`redis://${proxy.host}:${proxy.port}`));
    try {
      assert.equal(await redis.ping(), 'PONG');
      await redis.set('emq:{proxy-test}:thread', 'through the thread');
      assert.equal(await redis.get('emq:{proxy-test}:thread'), 'through the thread');
      await proxy.holdBack(0.2);
      const measured = await measureRoundTrip(redis, 20);
      assert.ok(measured.median >= 0.8, `median ${measured.median} with 1 ms asked and 0.2 held back`);
      await redis.unlink('emq:{proxy-test}:thread');
    } finally {
      await redis.quit().catch(() => redis.disconnect());
    }
    await assert.rejects(proxy.holdBack(-1), /0 or more/);
    await proxy.jitter(0);
    await assert.rejects(proxy.jitter(-1), /0 or more/);
    await proxy.close();
    await proxy.close();
    const refused = await new Promise<boolean>((resolve) => {
      const probe = connectTcp(proxy.port, proxy.host);
      probe.once('connect', () => {
        probe.destroy();
        resolve(false);
      });
      probe.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    });
    assert.ok(refused, 'nothing listens on the port after close()');
  });

  test('a proxy thread that cannot start says why', async () => {
    await assert.rejects(startProxyThread({ targetHost: '127.0.0.1', targetPort: handle.server.port, delayMs: -1 }), /latency proxy: .*0 or more/);
  });

  test('after close() nothing listens and nothing of the proxy keeps a process alive', async () => {
    // In a process of its own: it must exit by itself once close() has resolved, with a
    // connection through the proxy still open and a reply in flight when close() is called.
    const script = `
      import { startLatencyProxy } from ${JSON.stringify(fileURLToPath(new URL('../../src/server/latency-proxy.js', import.meta.url)))};
      import { connect } from 'node:net';
      const proxy = await startLatencyProxy({ targetHost: '127.0.0.1', targetPort: ${handle.server.port}, delayMs: 50 });
      const socket = connect(proxy.port, proxy.host);
      socket.on('error', () => {});
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write('*1\\r\\n$4\\r\\nPING\\r\\n');
      const closed = new Promise((resolve) => socket.once('close', resolve));
      await proxy.close();
      await closed;
      const refused = await new Promise((resolve) => {
        const probe = connect(proxy.port, proxy.host);
        probe.once('connect', () => { probe.destroy(); resolve(false); });
        probe.once('error', (err) => resolve(err.code === 'ECONNREFUSED'));
      });
      console.log(JSON.stringify({ refused }));
    `;
    const output = await new Promise<string>((resolve, reject) => {
      // The timeout is a guard against a hang (a handle left open), not a performance check.
      execFile(process.execPath, ['--input-type=module', '-e', script], { timeout: 20_000 }, (err, stdout, stderr) => {
        // Exit code and stderr first: the message's tail (the script) is what a log may cut.
        if (err)
          reject(
            new Error(
              `the process did not exit cleanly (code ${String(err.code)}, signal ${String(err.signal)}): ${stderr || '(no stderr)'}\nstdout: ${stdout}`,
            ),
          );
        else resolve(stdout);
      });
    });
    assert.deepEqual(JSON.parse(output), { refused: true });
  });
});
