import { fragmentsOf } from './search-highlights';

describe('fragmentsOf', () => {
  it('turns the start and stop marks of ts_headline into fragments', () => {
    expect(fragmentsOf('the \u0001zebrafish\u0002 migration failed')).toEqual([
      { text: 'the ', match: false },
      { text: 'zebrafish', match: true },
      { text: ' migration failed', match: false },
    ]);
    expect(fragmentsOf('\u0001users\u0002 \u0001API\u0002')).toEqual([
      { text: 'users', match: true },
      { text: ' ', match: false },
      { text: 'API', match: true },
    ]);
  });

  it('keeps text without marks, and an unclosed mark, as text', () => {
    expect(fragmentsOf('no match here')).toEqual([{ text: 'no match here', match: false }]);
    expect(fragmentsOf('open \u0001end')).toEqual([
      { text: 'open ', match: false },
      { text: 'end', match: true },
    ]);
    expect(fragmentsOf('')).toEqual([]);
  });
});
