import { consolePathSegments } from './console-static';

describe('consolePathSegments', () => {
  it('decodes the segments of a path under /console/', () => {
    expect(consolePathSegments('/console/')).toEqual([]);
    expect(consolePathSegments('/console/assets/app-1a2b.js')).toEqual(['assets', 'app-1a2b.js']);
    expect(consolePathSegments('/console/tasks/01J%20X')).toEqual(['tasks', '01J X']);
  });

  it('refuses traversal, encoded separators, dot files, control characters and bad encodings', () => {
    for (const path of [
      '/console/../etc/passwd',
      '/console/assets/%2e%2e/x',
      '/console/..%2fsecret',
      '/console/..%5csecret',
      '/console/a%2fb',
      '/console/.env',
      '/console/%0aindex.html',
      '/console/%E0%A4%A',
    ]) {
      expect([path, consolePathSegments(path)]).toEqual([path, undefined]);
    }
  });
});
