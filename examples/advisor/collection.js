// The same answer from one collection read (1 call).
const items = JSON.parse(host.get('/items').body);
console.log('low stock:', items.filter((item) => item.stock < 30).map((item) => item.name).join(', '));
