import { useMemo } from 'react';
import { useInfiniteQuery } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import { adminApi } from '../../api/admin-api';
import { ErrorMessage } from '../../components/error-message';
import { TaskFiltersForm } from '../../components/task-filters-form';
import { filtersFromQuery, filtersToApiQuery, filtersToQuery } from '../../lib/task-filters';
import { useDocumentTitle } from '../../lib/use-document-title';
import { SearchHitItem } from './search-hit-item';

/** Full-text search over messages and artifacts, ranked, with the live page's filters. */
export function SearchPage() {
  const [searchParams, setSearchParams] = useSearchParams();
  const words = searchParams.get('q')?.trim() ?? '';
  useDocumentTitle(words ? `Search: ${words}` : 'Search');
  const filters = useMemo(() => filtersFromQuery(searchParams), [searchParams]);
  const apiQuery = filtersToApiQuery(filters).toString();

  const hits = useInfiniteQuery({
    queryKey: ['search', words, apiQuery],
    enabled: words !== '',
    queryFn: ({ pageParam }) => {
      const query = new URLSearchParams(apiQuery);
      query.set('q', words);
      query.set('limit', '20');
      if (pageParam) query.set('cursor', pageParam);
      return adminApi.search(query);
    },
    initialPageParam: '',
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const results = hits.data?.pages.flatMap((page) => page.items) ?? [];

  return (
    <>
      <h1>Search</h1>
      <TaskFiltersForm
        label="Search handoffs"
        filters={filters}
        onApply={(next, form) => {
          const query = filtersToQuery(next);
          const nextWords = String(form.get('q') ?? '').trim();
          if (nextWords) query.set('q', nextWords);
          setSearchParams(query);
        }}
      >
        <div className="field wide">
          <label htmlFor="search-words">Words</label>
          <input id="search-words" name="q" type="search" defaultValue={words} />
        </div>
        <button type="submit" className="button">
          Search
        </button>
      </TaskFiltersForm>
      {words === '' && <p>Type words found in a handoff's messages or artifacts, then press Enter.</p>}
      {hits.isFetching && !hits.isFetchingNextPage && <p role="status">Searching…</p>}
      {hits.isError && <ErrorMessage error={hits.error} />}
      {hits.isSuccess && (
        <section aria-labelledby="results-title">
          <h2 id="results-title" className="results-title">
            {results.length === 0 ? `No handoff matches “${words}”` : `Handoffs matching “${words}”, best first`}
          </h2>
          <ol className="hits">
            {results.map((hit) => (
              <SearchHitItem key={hit.task.id} hit={hit} />
            ))}
          </ol>
        </section>
      )}
      {hits.hasNextPage && (
        <button type="button" className="button secondary" disabled={hits.isFetchingNextPage} onClick={() => void hits.fetchNextPage()}>
          More results
        </button>
      )}
    </>
  );
}
