// The JavaScript reference pipeline's core, timed with this machine's Node.js:
// JSON.parse of each export part, then JSON.stringify(envelope, null, 2) of our envelope.
// Usage: node node_floor.mjs ENVELOPE PART...   Prints one JSON line of figures.
import { readFileSync } from "node:fs";

const [envelopePath, ...parts] = process.argv.slice(2);
const decoder = new TextDecoder("utf-8"); // as a browser's File.text(): BOM dropped, bad bytes -> U+FFFD

let t0 = process.hrtime.bigint();
let elements = 0;
for (const part of parts) {
  const value = JSON.parse(decoder.decode(readFileSync(part)));
  if (Array.isArray(value)) elements += value.length;
}
const parseMs = Number(process.hrtime.bigint() - t0) / 1e6;

const expected = readFileSync(envelopePath);
const envelope = JSON.parse(decoder.decode(expected));
t0 = process.hrtime.bigint();
const text = JSON.stringify(envelope, null, 2);
const stringifyMs = Number(process.hrtime.bigint() - t0) / 1e6;
const identical = Buffer.from(text, "utf8").equals(expected);

console.log(JSON.stringify({
  parse_ms: parseMs, stringify_ms: stringifyMs, total_ms: parseMs + stringifyMs, elements,
  identical, max_rss_kb: process.resourceUsage().maxRSS,
}));
