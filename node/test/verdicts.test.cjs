// The classifier's cases (spec/verdicts.json, the same file the Python and Go tests read) through
// the TypeScript classifier: every case's facts give exactly its verdict.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { classifyClientRejection, classifyClientResult, classifyServerCall } = require('../dist/cjs/classify.js');
const { Unfinished } = require('../dist/cjs/outcome.js');

const { cases } = JSON.parse(readFileSync(join(__dirname, '..', '..', 'spec', 'verdicts.json'), 'utf8'));
const SHARED_FACTS = ['method', 'answer', 'rpcError', 'keepMessage', 'answerDeclined', 'inputDeclined'];
// The facts the TypeScript front ends hand the classifier, by side: a case with another is refused.
const FACTS = {
  sender: new Set([...SHARED_FACTS, 'callerCancelled', 'timedOut', 'transportClosed', 'errorName']),
  receiver: new Set([...SHARED_FACTS, 'peerCancelled', 'isCancellation', 'transportClosed']),
};

/** The TypeScript classifier's verdict on `facts`, through the function its front ends call. */
function classify(side, facts) {
  const unknown = Object.keys(facts).filter((name) => !FACTS[side].has(name));
  assert.deepEqual(unknown, [], `facts the TypeScript classifier does not take on the ${side}`);
  if (side === 'receiver') return classifyServerCall(facts);
  if ('answer' in facts) return classifyClientResult(facts.answer, facts);
  return classifyClientRejection({
    ...facts,
    callerAborted: facts.callerCancelled ?? false,
    errorName: facts.errorName ?? 'Error',
  });
}

/** A verdict in the file's words (a key only when the verdict has it). */
function verdict(found) {
  if (found instanceof Unfinished) {
    return { status: 'UNSET', resultType: found.resultType, ...(found.rpcCode === undefined ? {} : { rpcCode: found.rpcCode }) };
  }
  const fields = {
    errorType: found.errorType,
    rpcCode: found.rpcCode,
    cancelReason: found.cancelReason,
    description: found.description,
  };
  return {
    outcome: found.outcome,
    status: found.isError ? 'ERROR' : 'UNSET',
    ...Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)),
  };
}

const mine = [...cases.entries()].filter(([, found]) => found.languages?.includes('typescript') ?? true);

test('the file has the cases', () => {
  assert.ok(mine.length > 100, `${mine.length} cases`);
});

for (const [index, found] of mine) {
  test(`case ${index}: ${found.side} ${found.facts.method} (${found.rows.join('; ')})`, () => {
    assert.deepEqual(verdict(classify(found.side, found.facts)), found.verdict);
  });
}
