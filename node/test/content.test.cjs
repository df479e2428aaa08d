// The cases of content capture (spec/content.json, the file the Python, Go and Rust tests read)
// through the TypeScript package's: every case's value gives exactly its text.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { argumentsAttributes, resultAttributes } = require('../dist/cjs/content.js');
const { DEFAULT_SETTINGS } = require('../dist/cjs/config.js');
const semconv = require('../dist/cjs/semconv.js');

const { cases } = JSON.parse(readFileSync(join(__dirname, '..', '..', 'spec', 'content.json'), 'utf8'));

const settings = (maxContentLength) => ({ ...DEFAULT_SETTINGS, captureContent: true, maxContentLength });

test('spec/content.json has its cases', () => assert.ok(cases.length >= 9, `${cases.length} cases`));

for (const item of cases) {
  test(`content: ${item.name}`, () => {
    const captured = argumentsAttributes(item.value, settings(item.maxLength));
    assert.deepEqual(captured, { [semconv.GEN_AI_TOOL_CALL_ARGUMENTS]: item.captured });
  });
}

test("a tool's result is captured the same way", () => {
  const [item] = cases.filter((found) => 'content' in found.value);
  const captured = resultAttributes(item.value, settings(item.maxLength));
  assert.deepEqual(captured, { [semconv.GEN_AI_TOOL_CALL_RESULT]: item.captured });
});
