import { TASK_LIMITS } from '@app/contracts/model';
import { BoundedText, classifyLine, failReason, keepTail, lastLines, RunOutput, TEXT_MAX_CHARS, TEXT_MAX_JSON_BYTES } from './output';

describe('worker output', () => {
  it('sorts stdout lines by their exact markers', () => {
    expect(classifyLine('progress: step 1 ')).toEqual({ kind: 'progress', text: 'step 1' });
    expect(classifyLine('input-required: Which branch?')).toEqual({ kind: 'question', text: 'Which branch?' });
    expect(classifyLine('Progress: not a marker')).toEqual({ kind: 'output' });
    expect(classifyLine(' progress: indented is output')).toEqual({ kind: 'output' });
  });

  it('keeps output whole within the limits', () => {
    expect(keepTail('short')).toBe('short');
  });

  it('cuts long output to its end within the text part limit and says how much was cut', () => {
    const text = `${'a'.repeat(150_000)}THE END`;
    const kept = keepTail(text);
    expect(kept.length).toBeLessThanOrEqual(TEXT_MAX_CHARS);
    expect(kept.endsWith('THE END')).toBe(true);
    const cut = Number(/^\[… (\d+) earlier characters cut …\]\n/.exec(kept)?.[1]);
    expect(cut + kept.length - kept.indexOf('\n') - 1).toBe(text.length);
  });

  it('cuts output of characters that JSON escapes long to its byte budget', () => {
    const kept = keepTail('\u0001'.repeat(90_000));
    expect(Buffer.byteLength(JSON.stringify(kept))).toBeLessThanOrEqual(TEXT_MAX_JSON_BYTES);
    const body = kept.slice(kept.indexOf('\n') + 1);
    expect(kept).toMatch(/^\[… \d+ earlier characters cut …\]\n/);
    expect(body).toBe('\u0001'.repeat(body.length));
  });

  it('never splits a surrogate pair', () => {
    const kept = keepTail('😀'.repeat(10), 12, Number.MAX_SAFE_INTEGER);
    expect(kept).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });

  it('keeps the last lines of stderr', () => {
    const stderr = Array.from({ length: 30 }, (_, index) => `line ${index + 1}`).join('\n');
    expect(lastLines(`${stderr}\n\n`, 3, 1000)).toBe('line 28\nline 29\nline 30');
  });

  it('bounds a growing text to its newest characters', () => {
    const text = new BoundedText(10);
    for (let index = 0; index < 100; index++) text.append('0123456789');
    expect(text.toString()).toBe('[… 990 earlier characters cut …]\n0123456789');
  });

  it('sorts a run: progress apart, the result without marker lines, the question from its marker lines', () => {
    const output = new RunOutput();
    expect(output.stdoutLine('progress: half way')).toBe('half way');
    expect(output.stdoutLine('Result line')).toBeNull();
    expect(output.stdoutLine('input-required: Which one?')).toBeNull();
    expect(output.result()).toBe('Result line');
    expect(output.question()).toBe('Which one?');
    expect(output.asked).toBe(true);
    const plain = new RunOutput();
    plain.stdoutLine('Should I go on?');
    expect(plain.question()).toBe('Should I go on?');
    expect(new RunOutput().question()).toBeNull();
  });

  it('makes fail reasons that fit the relay, keeping the headline', () => {
    const reason = failReason('The command exited with code 1.', 'x'.repeat(10_000));
    expect(reason.length).toBeLessThanOrEqual(TASK_LIMITS.reasonChars);
    expect(reason.startsWith('The command exited with code 1.\n')).toBe(true);
    expect(failReason('Headline.', '  ')).toBe('Headline.');
  });
});
