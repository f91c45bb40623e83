import type pg from 'pg';

/**
 * The pg pool behind a service's TypeORM Postgres data source: the request paths send their
 * statements to it directly.
 */
export function pgPoolOf(dataSource: { driver: unknown }): pg.Pool {
  return (dataSource.driver as { master: pg.Pool }).master;
}
