// Shop: categories, a paginated catalogue with search, product pages, cart, checkout, orders,
// returns and a wishlist.
(() => {
  const A = window.__app, h = A.h;

  A.sidebarView = async () => {
    const d = await A.get('categories');
    return h('div', {},
      A.nav([{href: A.hash('catalog'), label: 'All products'},
             ...d.categories.map((c) => ({href: A.hash('catalog', {category: c.name}), label: c.name}))]),
      h('div', {class: 'side-title'}, 'Your account'),
      A.nav([{href: A.hash('cart'), label: 'Cart', count: d.cart},
             {href: A.hash('orders'), label: 'Orders'},
             {href: A.hash('wishlist'), label: 'Wishlist', count: d.wishlist}]));
  };

  const searchBox = (q) => A.searchBox('Search products', q, (q) => A.go(A.hash('catalog', {q})));

  A.route('catalog', async (_, query) => {
    const d = await A.get('products', query);
    const title = query.q ? `Search: ${query.q}` : (query.category || 'All products');
    return h('div', {}, A.title(title), searchBox(query.q),
      d.items.length ? h('div', {class: 'list'}, d.items.map((p) =>
        h('a', {class: 'row', href: A.hash('product/' + p.id)},
          h('span', {class: 'c2'}, p.name), h('span', {class: 'c1'}, p.category),
          h('span', {class: 'c3 price'}, A.money(p.price))))) : A.empty('No products found.'),
      d.pages > 1 ? A.pager(d.page, d.pages, (n) => A.hash('catalog', {...query, page: n})) : null);
  });

  A.route('product/:id', async ({id}) => {
    const p = await A.get('products/' + id);
    const form = h('div', {class: 'form'},
      p.options ? A.choice('Size', 'option', p.options.split(','), '') : null,
      A.field('Quantity', 'qty', {value: '1'}));
    const add = () => {
      const v = A.values(form);
      A.write('cart/add', {product_id: p.id, qty: v.qty, option: v.option || ''}, `Added ${p.name} to the cart`,
              A.hash('product/' + id));
    };
    return h('div', {},
      h('a', {class: 'back-link', href: A.hash('catalog', {category: p.category})}, `‹ Back to ${p.category}`),
      A.title(p.name),
      h('div', {class: 'card'},
        h('p', {class: 'price'}, A.money(p.price)),
        h('p', {class: 'meta-line'}, `Rating ${p.rating} of 5 · ${p.stock} in stock`),
        h('p', {}, p.description)),
      form,
      A.toolbar(A.button('Add to cart', add, 'primary'),
        A.button(p.wished ? 'Remove from wishlist' : 'Add to wishlist', () =>
          A.write(`wishlist/${p.id}/toggle`, {}, p.wished ? 'Removed from your wishlist' : 'Added to your wishlist',
                  A.hash('product/' + id)))));
  });

  A.route('cart', async () => {
    const d = await A.get('cart');
    if (!d.items.length) return h('div', {}, A.title('Cart'), A.empty('Your cart is empty.'));
    const qty = (item, n) => A.write(`cart/${item.id}/update`, {qty: n}, null, A.hash('cart'));
    return h('div', {}, A.title('Cart'),
      h('div', {class: 'list'}, d.items.map((i) => h('div', {class: 'row'},
        h('span', {class: 'c2'}, i.name + (i.option ? ` (size ${i.option})` : '')),
        h('span', {class: 'c1'}, `Quantity: ${i.qty}`),
        A.button('−', () => qty(i, i.qty - 1)), A.button('+', () => qty(i, i.qty + 1)),
        A.button('Remove', () => A.write(`cart/${i.id}/remove`, {}, `Removed ${i.name}`, A.hash('cart'))),
        h('span', {class: 'c3 price'}, A.money(i.price * i.qty))))),
      h('p', {class: 'price'}, `Subtotal: ${A.money(d.subtotal)}`),
      A.toolbar(A.button('Checkout', () => A.go(A.hash('checkout')), 'primary')));
  });

  A.route('checkout', async () => {
    const d = await A.get('cart');
    if (!d.items.length) return h('div', {}, A.title('Checkout'), A.empty('Your cart is empty.'));
    const form = h('div', {class: 'form'},
      A.choice('Deliver to', 'address', d.addresses.map((a) => a.label), ''),
      h('p', {class: 'meta-line'}, d.addresses.map((a) => `${a.label}: ${a.line}`).join(' · ')),
      A.choice('Shipping', 'shipping', Object.keys(d.shipping), ''),
      h('p', {class: 'meta-line'}, 'Standard shipping is free; Express costs $15.00.'));
    const place = () => {
      const v = A.values(form);
      const address = d.addresses.find((a) => a.label === v.address);
      A.write('checkout', {address_id: address ? address.id : 0, shipping: v.shipping}, 'Order placed',
              A.hash('orders'));
    };
    return h('div', {}, A.title('Checkout'),
      h('div', {class: 'card'}, d.items.map((i) => h('p', {class: 'meta-line'},
        `${i.qty} × ${i.name}${i.option ? ` (size ${i.option})` : ''}: ${A.money(i.qty * i.price)}`))),
      form, A.toolbar(A.button('Place order', place, 'primary')));
  });

  A.route('orders', async (_, query) => {
    const d = await A.get('orders', query);
    return h('div', {}, A.title('Orders'),
      d.items.length ? h('div', {class: 'list'}, d.items.map((o) =>
        h('a', {class: 'row', href: A.hash('order/' + o.number)},
          h('span', {class: 'c1'}, `Order ${o.number}`), h('span', {class: 'c2'}, o.status),
          h('span', {class: 'c3'}, A.fmtDate(o.date))))) : A.empty('No orders yet.'),
      d.pages > 1 ? A.pager(d.page, d.pages, (n) => A.hash('orders', {page: n})) : null);
  });

  A.route('order/:number', async ({number}) => {
    const o = await A.get('orders/' + number);
    const returned = Object.fromEntries(o.returns.map((r) => [r.item_id, r]));
    return h('div', {},
      h('a', {class: 'back-link', href: A.hash('orders')}, '‹ Back to orders'),
      A.title(`Order ${o.number}`),
      h('div', {class: 'card'},
        h('p', {class: 'meta-line'}, `Placed ${A.fmtDate(o.date)} · ${o.status} · ${o.shipping} shipping`),
        h('p', {class: 'meta-line'}, `Deliver to ${o.address}`),
        h('p', {class: 'price'}, `Total ${A.money(o.total)}`)),
      h('div', {class: 'list'}, o.items.map((i) => h('div', {class: 'row'},
        h('span', {class: 'c2'}, `${i.qty} × ${i.name}${i.option ? ` (size ${i.option})` : ''}`),
        returned[i.id] ? h('span', {class: 'badge'}, `Return requested: ${returned[i.id].reason}`)
          : o.status === 'Delivered'
            ? A.button('Return', () => A.go(A.hash(`return/${o.number}/${i.id}`))) : null,
        h('span', {class: 'c3 price'}, A.money(i.price * i.qty))))));
  });

  A.route('return/:number/:item', async ({number, item}) => {
    const o = await A.get('orders/' + number);
    const it = o.items.find((i) => String(i.id) === item);
    if (!it) return A.empty('No such item.');
    const form = h('div', {class: 'form'}, A.choice('Reason', 'reason', o.reasons, ''));
    const submit = () => A.write('returns', {order: number, item_id: it.id, reason: A.values(form).reason},
                                 'Return requested', A.hash('order/' + number));
    return h('div', {},
      h('a', {class: 'back-link', href: A.hash('order/' + number)}, `‹ Back to order ${number}`),
      A.title('Return an item'),
      h('p', {}, `${it.name} from order ${number}`), form,
      A.toolbar(A.button('Submit return', submit, 'primary')));
  });

  A.route('wishlist', async () => {
    const d = await A.get('wishlist');
    return h('div', {}, A.title('Wishlist'),
      d.items.length ? h('div', {class: 'list'}, d.items.map((p) =>
        h('a', {class: 'row', href: A.hash('product/' + p.id)},
          h('span', {class: 'c2'}, p.name), h('span', {class: 'c3 price'}, A.money(p.price)))))
        : A.empty('Your wishlist is empty.'));
  });

  A.start(A.hash('catalog'));
})();
