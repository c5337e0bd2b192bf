// console.table, printing as Node 20 does for plain data: a box-drawn table
// whose cells are left-aligned (as the Node 20.20 the conformance suite
// compares with; earlier Node releases centred them), index column "(index)" (or "(iteration index)"
// for Map/Set, with "Key"/"Values"), a "Values" column for primitive rows,
// cells formatted as inspect does (strings quoted, objects with more than two
// keys as [Object], arrays shown to 3 items). Loaded by guest/web.c.
(function (native) {
  'use strict';

  const cell = (value) => {
    const object = value !== null && typeof value === 'object';
    const depth = object && !Array.isArray(value) && Object.keys(value).length > 2 ? -1 : 0;
    return native.inspect(value, depth, 3);
  };

  // Display width: one column per code point (wide East Asian characters
  // and emoji count as one here, Node counts two).
  const width = (text) => {
    let n = 0;
    for (const ch of text) if (ch.codePointAt(0) >= 0x20) n++;
    return n;
  };

  function render(head, columns) {
    const rows = Math.max(0, ...columns.map((c) => c.length));
    const widths = head.map((h, i) => {
      let w = width(h);
      for (let r = 0; r < rows; r++) {
        const v = Object.prototype.hasOwnProperty.call(columns[i], r) ? columns[i][r] : '';
        w = Math.max(w, width(v));
      }
      return w;
    });
    const line = (cells) => '│ ' + cells.map((text, i) => {
      const room = widths[i] - width(text);
      return text + ' '.repeat(room);
    }).join(' │ ') + ' │';
    const rule = (left, middle, right) => left + widths.map((w) => '─'.repeat(w + 2)).join(middle) + right;
    let out = rule('┌', '┬', '┐') + '\n' + line(head) + '\n' + rule('├', '┼', '┤') + '\n';
    for (let r = 0; r < rows; r++) {
      out += line(columns.map((c) => (Object.prototype.hasOwnProperty.call(c, r) ? c[r] : ''))) + '\n';
    }
    return out + rule('└', '┴', '┘');
  }

  function table(data, properties = undefined) {
    if (properties !== undefined && !Array.isArray(properties)) {
      throw new TypeError('The "properties" argument must be an instance of Array.');
    }
    if (data === null || typeof data !== 'object') return this.log(data);
    const indexes = (n) => Array.from({ length: n }, (_, i) => cell(i));
    if (data instanceof Map) {
      const keys = [];
      const values = [];
      for (const [k, v] of data) { keys.push(cell(k)); values.push(cell(v)); }
      return this.log(render(['(iteration index)', 'Key', 'Values'], [indexes(keys.length), keys, values]));
    }
    if (data instanceof Set) {
      const values = [];
      for (const v of data) values.push(cell(v));
      return this.log(render(['(iteration index)', 'Values'], [indexes(values.length), values]));
    }
    const columns = new Map();
    const primitives = [];
    let hasPrimitives = false;
    const rowKeys = Object.keys(data);
    rowKeys.forEach((rowKey, i) => {
      const item = data[rowKey];
      const primitive = item === null || (typeof item !== 'function' && typeof item !== 'object');
      if (properties === undefined && primitive) {
        hasPrimitives = true;
        primitives[i] = cell(item);
        return;
      }
      for (const key of properties || Object.keys(item)) {
        if (!columns.has(key)) columns.set(key, []);
        const own = !primitive && Object.prototype.hasOwnProperty.call(item, key);
        columns.get(key)[i] = own ? cell(item[key]) : '';
      }
    });
    const head = ['(index)', ...columns.keys()];
    const values = [rowKeys, ...columns.values()];
    if (hasPrimitives) {
      head.push('Values');
      values.push(primitives);
    }
    return this.log(render(head, values));
  }

  return { table };
})
