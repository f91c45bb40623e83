import type { DataSource } from 'typeorm';
import type { DependencyStatus } from '@app/contracts';

export async function checkDatabase(dataSource: DataSource, timeoutMs = 1000): Promise<DependencyStatus> {
  if (!dataSource.isInitialized) return 'down';
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('database health check timed out')), timeoutMs);
    });
    await Promise.race([dataSource.query('SELECT 1'), timeout]);
    return 'up';
  } catch {
    return 'down';
  } finally {
    clearTimeout(timer);
  }
}
