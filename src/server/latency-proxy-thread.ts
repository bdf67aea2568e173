/**
 * The latency proxy in a thread of its own (see startProxyThread in latency-proxy.ts): the race's
 * client then does none of the proxy's forwarding on its own event loop, as none of a real
 * network's work falls on a real client. Messages: the options in, `{ port }` or `{ error }` out;
 * `{ holdBack }` answered by `{ held }`, `{ jitter }` by `{ jittered }`; `{ close }`, after which the thread ends.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { startLatencyProxy, type LatencyProxyOptions } from './latency-proxy.js';

type Request = { readonly holdBack: number } | { readonly jitter: number } | { readonly close: true };

const port = parentPort;
if (port) {
  try {
    const proxy = await startLatencyProxy(workerData as LatencyProxyOptions);
    port.on('message', (request: Request) => {
      if ('holdBack' in request) {
        proxy.holdBack(request.holdBack);
        port.postMessage({ held: request.holdBack });
      } else if ('jitter' in request) {
        proxy.jitter(request.jitter);
        port.postMessage({ jittered: request.jitter });
      } else {
        void proxy.close().then(() => port.close());
      }
    });
    port.postMessage({ port: proxy.port });
  } catch (err) {
    port.postMessage({ error: err instanceof Error ? err.message : String(err) });
    port.close();
  }
}
