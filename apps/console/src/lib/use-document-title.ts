import { useEffect } from 'react';

/** Sets the page's title, so each page is named in the tab, the history and to screen readers. */
export function useDocumentTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · AgentRelay console`;
  }, [title]);
}
