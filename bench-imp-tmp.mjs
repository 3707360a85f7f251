const t0 = performance.now(); const r0 = process.memoryUsage();
await import('@modelcontextprotocol/sdk/client/index.js');
await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
const t1 = performance.now(); const r1 = process.memoryUsage();
console.log('sdk client import ms', (t1-t0).toFixed(0), 'heapUsed +MB', ((r1.heapUsed-r0.heapUsed)/1048576).toFixed(1), 'rss +MB', ((r1.rss-r0.rss)/1048576).toFixed(1));
