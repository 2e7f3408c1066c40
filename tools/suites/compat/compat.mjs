// Drives the Upstash REST stand-in with Upstash's own client, @upstash/redis,
// and exits non-zero on the first behaviour that differs from what the
// client expects of Upstash. Run by compat_test.go.
import { Redis } from "@upstash/redis";
import assert from "node:assert/strict";

const url = process.env.UPSTASH_REDIS_REST_URL;
const token = process.env.UPSTASH_REDIS_REST_TOKEN;
const redis = new Redis({ url, token, retry: false });

const checks = [];
const check = (name, fn) => checks.push([name, fn]);

check("set and get a string", async () => {
  assert.equal(await redis.set("s", "hello"), "OK");
  assert.equal(await redis.get("s"), "hello");
});
check("binary-unsafe characters survive base64", async () => {
  await redis.set("u", "héllo ✓ \u0001");
  assert.equal(await redis.get("u"), "héllo ✓ \u0001");
});
check("json values round-trip", async () => {
  await redis.set("j", { a: 1, b: [true, null] });
  assert.deepEqual(await redis.get("j"), { a: 1, b: [true, null] });
});
check("incr and numbers", async () => {
  assert.equal(await redis.incr("n"), 1);
  assert.equal(await redis.incrby("n", 41), 42);
});
check("missing key is null", async () => {
  assert.equal(await redis.get("missing"), null);
});
check("hashes", async () => {
  await redis.hset("h", { f1: "v1", f2: 2 });
  assert.deepEqual(await redis.hgetall("h"), { f1: "v1", f2: 2 });
});
check("sorted sets", async () => {
  await redis.zadd("z", { score: 2, member: "b" }, { score: 1, member: "a" });
  assert.deepEqual(await redis.zrange("z", 0, -1), ["a", "b"]);
  assert.equal(await redis.zscore("z", "b"), 2);
});
check("errors surface as UpstashError", async () => {
  await assert.rejects(redis.incr("s"), /not an integer/);
});
check("pipeline", async () => {
  const p = redis.pipeline();
  p.set("p1", "a");
  p.get("p1");
  p.incr("pn");
  assert.deepEqual(await p.exec(), ["OK", "a", 1]);
});
check("pipeline keeps errors when asked", async () => {
  const p = redis.pipeline();
  p.incr("s");
  p.get("p1");
  const res = await p.exec({ keepErrors: true });
  assert.ok(res[0].error && /not an integer/.test(res[0].error));
  assert.equal(res[1].result, "a");
});
check("multi-exec", async () => {
  const m = redis.multi();
  m.set("t1", "x");
  m.incr("tn");
  m.get("t1");
  assert.deepEqual(await m.exec(), ["OK", 1, "x"]);
});
check("eval and evalsha", async () => {
  const src = "return {KEYS[1], ARGV[1], 7}";
  assert.deepEqual(await redis.eval(src, ["k"], ["v"]), ["k", "v", 7]);
  const sha = await redis.scriptLoad(src);
  assert.deepEqual(await redis.evalsha(sha, ["k2"], ["v2"]), ["k2", "v2", 7]);
});
check("Script falls back from EVALSHA to EVAL", async () => {
  await redis.scriptFlush();
  const script = redis.createScript("return ARGV[1] .. '!'");
  assert.equal(await script.exec([], ["hi"]), "hi!");
});
check("Upstash-only shebang flags", async () => {
  const src = "#!lua flags=allow-key-locking\nreturn redis.call('GET', KEYS[1])";
  assert.equal(await redis.eval(src, ["s"], []), "hello");
});
check("expiry", async () => {
  await redis.set("e", "1", { ex: 100 });
  const ttl = await redis.ttl("e");
  assert.ok(ttl > 90 && ttl <= 100, `ttl ${ttl}`);
});
check("wrong token is refused", async () => {
  const bad = new Redis({ url, token: "wrong", retry: false });
  await assert.rejects(bad.get("s"), /Unauthorized|401/);
});

let failed = 0;
for (const [name, fn] of checks) {
  try {
    await fn();
    console.log(`ok   ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e.message}`);
  }
}
console.log(`${checks.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
