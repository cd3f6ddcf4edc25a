/**
 * Sent or not: what the client can tell of a call that got no answer. A request written on the
 * socket and not answered (no answer before the timeout, the connection reset after the request,
 * an HTTP 200 with no byte of its body) may have been billed: `unansweredCallOf` names it. A
 * request that never left (nothing listens, the name does not resolve, the TLS handshake fails or
 * hangs) was not billed: it names nothing. Real sockets, the real simulator; no mocks.
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/sim/server.ts';
import { UpstreamClient, unansweredCallOf } from '../../src/upstream/client.ts';
import { NetworkError, TimeoutError, type UpstreamError } from '../../src/upstream/errors.ts';
import { startTestSim, TEST_KEY, UNTHROTTLED } from '../support/sim.ts';

const TIMEOUT_MS = 800;

/** The error a call to `baseUrl` fails with. */
async function failureOf(baseUrl: string, keyword = '测试企业'): Promise<UpstreamError> {
  const client = new UpstreamClient({ baseUrl, apiKey: TEST_KEY, timeoutMs: TIMEOUT_MS });
  try {
    await client.searchEnterprise(keyword);
  } catch (err) {
    return err as UpstreamError;
  }
  throw new Error(`the call to ${baseUrl} was answered`);
}

const portOf = (s: Server | TcpServer) => (s.address() as AddressInfo).port;

describe('a call that got no answer: sent, or never sent', { timeout: 60_000 }, () => {
  let sim: RunningSimulator;
  /** Answers HTTP 200 and its headers, then nothing. */
  let headersOnly: Server;
  /** Takes the connection and says nothing: a TLS handshake to it hangs. */
  let silent: TcpServer;
  let closedPort: number;
  const sockets = new Set<import('node:net').Socket>();

  beforeAll(async () => {
    sim = await startTestSim({ seed: 3, rateLimits: UNTHROTTLED });
    headersOnly = createHttpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
    });
    silent = createTcpServer((s) => {
      sockets.add(s);
      s.on('error', () => {});
    });
    const closed = createTcpServer();
    for (const s of [headersOnly, silent, closed])
      await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    closedPort = portOf(closed);
    await new Promise((r) => closed.close(r));
    // One answered call first: this process has seen its HTTP stack announce a request written.
    const name = sim.sim.world().all()[0]?.ENTNAME ?? '';
    await new UpstreamClient({ baseUrl: sim.url, apiKey: TEST_KEY }).searchEnterprise(name);
  });

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    headersOnly?.closeAllConnections();
    await new Promise((r) => headersOnly?.close(r));
    await new Promise((r) => silent?.close(r));
    await sim?.close();
  });

  it('a request nobody answered before the timeout was sent: it may have been billed', async () => {
    sim.sim.setFaults({ rates: { timeout: 1 }, latencyMs: [0, 0] });
    const err = await failureOf(sim.url);
    expect(err).toBeInstanceOf(TimeoutError);
    expect(unansweredCallOf(err)).toEqual({
      what: `no answer within ${TIMEOUT_MS} ms; the request was sent`,
    });
  });

  it('a billed call answered after the timeout (the late fault) is one of them, and the simulator billed it', async () => {
    sim.sim.setFaults({ rates: { late: 1 }, latencyMs: [0, 0], lateMs: 30_000 });
    const before = { ...sim.sim.counters };
    const name = sim.sim.world().all()[1]?.ENTNAME ?? '';
    const pid = sim.sim.world().all()[1]?.PID ?? '';
    const err = await failureOf(sim.url, name);
    expect(err).toBeInstanceOf(TimeoutError);
    expect(unansweredCallOf(err)?.what).toMatch(/the request was sent$/);
    expect(sim.sim.counters.creditsBilled - before.creditsBilled).toBe(3);
    expect(sim.sim.counters.billedByPid[pid]).toBe(1);
    expect(sim.sim.counters.outcomes['enterprise-search']['success:late']).toBe(1);
    expect((sim.sim.state() as { faults: string }).faults).toBe('late=1@30000');
  });

  it('a connection reset after the request was written may have been billed', async () => {
    sim.sim.setFaults({ rates: { reset: 1 }, latencyMs: [0, 0] });
    const err = await failureOf(sim.url);
    expect(err).toBeInstanceOf(NetworkError);
    expect(unansweredCallOf(err)?.what).toMatch(
      /^the connection broke before an answer.*; the request was sent$/,
    );
  });

  it('an HTTP 200 with no byte of its body before the timeout may have been billed', async () => {
    const err = await failureOf(`http://127.0.0.1:${portOf(headersOnly)}`);
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err.response?.httpStatus).toBe(200);
    expect(unansweredCallOf(err)?.what).toBe(
      'HTTP 200 and no byte of the body before the timeout struck; the request was sent',
    );
  });

  it('an answer is not unanswered: a 500 says what it was', async () => {
    sim.sim.setFaults({ rates: { '500': 1 }, latencyMs: [0, 0] });
    const err = await failureOf(sim.url);
    expect(err.code).toBe('server_error');
    expect(unansweredCallOf(err)).toBeNull();
    sim.sim.setFaults({ rates: {}, latencyMs: [0, 0] });
  });

  it('a refused connection was never sent', async () => {
    const err = await failureOf(`http://127.0.0.1:${closedPort}`);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.message).toMatch(/ECONNREFUSED/);
    expect(unansweredCallOf(err)).toBeNull();
  });

  it('a name that does not resolve was never sent', async () => {
    const err = await failureOf('http://daybook-upstream.invalid');
    expect(err).toBeInstanceOf(NetworkError);
    expect(unansweredCallOf(err)).toBeNull();
  });

  it('a TLS handshake that fails, or hangs past the timeout, sent nothing', async () => {
    // TLS to a plain HTTP server: the handshake fails.
    const refused = await failureOf(`https://127.0.0.1:${portOf(headersOnly)}`);
    expect(refused).toBeInstanceOf(NetworkError);
    expect(unansweredCallOf(refused)).toBeNull();
    // TLS to a server that never answers the handshake: the timeout strikes before any request.
    const hung = await failureOf(`https://127.0.0.1:${portOf(silent)}`);
    expect(hung).toBeInstanceOf(TimeoutError);
    expect(unansweredCallOf(hung)).toBeNull();
  });
});
