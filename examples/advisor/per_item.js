// The wasteful way: the IDs, then one call per item (1 + 12 = 13 calls).
const ids = JSON.parse(host.get('/item-ids').body);
let low = [];
for (const id of ids) {
  const item = JSON.parse(host.get('/items/' + id).body);
  if (item.stock < 30) low.push(item.name);
}
console.log('low stock:', low.join(', '));
