// How public/<source>.json's tools were transcribed (docs/drug-target.md): the tools array
// of a server's tools/list handler in its src/index.ts, evaluated by Node.js.
// Usage: git show HEAD:src/index.ts | node extract_tools.mjs  -> JSON array of {name, description, inputSchema}
import { readFileSync } from 'node:fs';
const src = readFileSync(0, 'utf8');
const at = src.indexOf('ListToolsRequestSchema, async');
const start = src.indexOf('tools: [', at) + 'tools: '.length;
let depth = 0, i = start, quote = null;
for (; i < src.length; i++) {
  const c = src[i];
  if (quote) { if (c === '\\') { i++; continue; } if (c === quote) quote = null; continue; }
  if (c === "'" || c === '"' || c === '`') { quote = c; continue; }
  if (c === '/' && src[i + 1] === '/') { i = src.indexOf('\n', i); continue; }
  if (c === '[' || c === '{') depth++;
  if (c === ']' || c === '}') { depth--; if (depth === 0) break; }
}
const tools = new Function('return ' + src.slice(start, i + 1))();
process.stdout.write(JSON.stringify(tools.map(t => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })), null, 2));
