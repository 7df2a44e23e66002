/** The JSON body every echo benchmark sends (a small record with a few types). */
export const ECHO_PAYLOAD = JSON.stringify({
  id: 42,
  name: 'iris sample',
  features: [5.1, 3.5, 1.4, 0.2],
  tags: ['a', 'b', 'c'],
  meta: { source: 'bench', ok: true },
});
