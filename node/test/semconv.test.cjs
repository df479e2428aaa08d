// The names module is what spec/names.yaml gives: src/semconv.ts carries the sha256 of the spec it
// was generated from (spec/generate.py); a spec changed since fails here. Reads the source and the
// spec only: no build, no other language's toolchain.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..', '..');

test('src/semconv.ts was generated from the spec as it is now', () => {
  const generated = readFileSync(join(root, 'node', 'src', 'semconv.ts'), 'utf8');
  const stamp = /spec\/names\.yaml sha256 ([0-9a-f]{64})/.exec(generated);
  assert.ok(stamp, 'node/src/semconv.ts has no spec hash: run python spec/generate.py');
  const spec = createHash('sha256').update(readFileSync(join(root, 'spec', 'names.yaml'))).digest('hex');
  assert.equal(stamp[1], spec, 'node/src/semconv.ts is stale: run python spec/generate.py');
});
