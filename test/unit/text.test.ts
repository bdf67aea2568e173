import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fewNamed, groupFigure, groupThousands, nearWord, numberLike, plural, shownValue, VALUE_NOT_SHOWN } from '../../src/shared/text.js';

test('groupThousands writes what en-US toLocaleString writes, for every size of integer and sign', () => {
  const values = [0, 7, 999, 1000, 1001, 99_999, 100_000, 123_456, 1_000_000, 1_234_567, 987_654_321, Number.MAX_SAFE_INTEGER, 1e21];
  for (const value of values) {
    assert.equal(groupThousands(value), value.toLocaleString('en-US'), String(value));
    assert.equal(groupThousands(-value), (-value).toLocaleString('en-US').replace(/^-0$/, '0'), String(-value));
  }
  for (let digits = 1; digits <= 16; digits++) {
    const value = Number('9'.repeat(digits));
    assert.equal(groupThousands(value), value.toLocaleString('en-US'), String(value));
  }
});

test('groupThousands: a string of digits grouped as its number, other text and fractions as they are', () => {
  assert.equal(groupThousands('1000000'), '1,000,000');
  assert.equal(groupThousands('0012'), '12');
  assert.equal(groupThousands('12 jobs'), '12 jobs');
  assert.equal(groupThousands('-1000'), '-1000');
  assert.equal(groupThousands(''), '');
  assert.equal(groupThousands(1234.5), '1234.5');
  assert.equal(plural(1, 'job'), '1 job');
  assert.equal(plural(12_345, 'job'), '12,345 jobs');
});

test('groupFigure groups a summary figure like a count, with one decimal where it has one', () => {
  assert.equal(groupFigure(3279.5), '3,279.5');
  assert.equal(groupFigure(1200), '1,200');
  assert.equal(groupFigure(2.5), '2.5');
  assert.equal(groupFigure(1234567.25), '1,234,567.3');
  assert.equal(groupFigure(-1500.5), '-1,500.5');
});

test('shownValue repeats a value mistyped as one of its kind, and no other: a password typed into a flag is not printed back', () => {
  // Numbers mistyped: digits with separators and a unit's letters.
  for (const raw of ['10k', '1e6', '5ms', '1,000', '-3', '1.5', ' 7 ', '']) assert.equal(shownValue(raw, numberLike(raw)), JSON.stringify(raw), raw);
  // Short lowercase words are shown whatever the flag (`fast` for a mode, `abc` for a number).
  for (const raw of ['fast', 'hash', 'abc', 'in-script']) assert.equal(shownValue(raw, numberLike(raw)), JSON.stringify(raw), raw);
  // An empty value (`--vary=`, `--lib=`) hides nothing, whatever the flag.
  for (const raw of ['', '  ']) assert.equal(shownValue(raw), JSON.stringify(raw), raw);
  // Anything else is not: digits with letters, capitals, symbols, URLs, long words.
  for (const raw of [
    's3cretPW',
    'hunter2xyz',
    'Zq7/p@ss%w0rd',
    'redis://:pw@127.0.0.1:7000',
    ':pw@host:1',
    'correcthorsebattery',
    'PASSWORD',
    '12345678901234567',
  ])
    assert.equal(shownValue(raw, numberLike(raw)), VALUE_NOT_SHOWN, raw);
  // A choice within two edits of a known one, or the start of one, is shown though it has capitals or digits.
  assert.equal(shownValue('Atomc', nearWord('Atomc', ['atomic', 'loop'])), '"Atomc"');
  assert.equal(shownValue('bullmq5', nearWord('bullmq5', ['bullmq'])), '"bullmq5"');
  assert.equal(shownValue('s3cretPW', nearWord('s3cretPW', ['atomic', 'loop'])), VALUE_NOT_SHOWN);
  assert.equal(nearWord('node-res', ['node-resque']), true, 'the start of a choice');
  assert.equal(nearWord('lop', ['loop']), true, 'one edit');
  assert.equal(nearWord('no', ['node-resque']), false, 'the start of a choice counts from three letters');
  assert.equal(nearWord('a b', ['atomic']), false, 'one word only');
});

test('fewNamed: a few names in a sentence, the rest counted', () => {
  assert.equal(fewNamed([]), '');
  assert.equal(fewNamed(['a']), 'a');
  assert.equal(fewNamed(['a', 'b']), 'a and b');
  assert.equal(fewNamed(['a', 'b', 'c']), 'a, b and c');
  assert.equal(fewNamed(['a', 'b', 'c', 'd', 'e']), 'a, b, c and 2 more');
});
