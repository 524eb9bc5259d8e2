// Offline: the service worker keeps one versioned copy of the app (every file the
// build wrote, listed by web/build.mjs together with a hash of their bytes), so a
// reload without network works after the first visit. A new build has a new
// version: it installs beside the old one, takes over at once and deletes the old
// copy, so files of two versions never mix. Only this origin's GETs are answered.
const VERSION = '__SIGHTLINE_VERSION__';
const FILES = ['__SIGHTLINE_FILES__'];
const CACHE = `sightline-${VERSION}`;

self.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    await cache.addAll(FILES.map((f) => new Request(f, { cache: 'reload' })));
    await self.skipWaiting();
  })());
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    const names = await caches.keys();
    await Promise.all(names.filter((n) => n.startsWith('sightline-') && n !== CACHE).map((n) => caches.delete(n)));
    await self.clients.claim();
  })());
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET' || new URL(request.url).origin !== self.location.origin) return;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    // ?embed=1, ?preset=… and #v1=… select what the page shows, not which file it is.
    const hit = await cache.match(request, { ignoreSearch: true });
    return hit || fetch(request);
  })());
});
