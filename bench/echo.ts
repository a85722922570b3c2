/** The reference: a bare Bun.serve that answers every request with a small JSON body. */
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.argv[2] ?? 0),
  async fetch(req) {
    if (req.method === "POST") await req.arrayBuffer();
    return new Response(JSON.stringify({ meta: { requestId: "req_echo" }, data: { valid: true, code: "VALID" } }), {
      headers: { "content-type": "application/json" },
    });
  },
});
console.log(JSON.stringify({ msg: "echo listening", url: `http://127.0.0.1:${server.port}` }));
