class _Node:
    def __init__(self, key, parent):
        self.key, self.parent, self.children, self.used = key, parent, {}, 0.0


class PrefixCache:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.root = _Node(None, None)
        self.count = 0

    def _walk(self, blocks):
        node, path = self.root, []
        for b in blocks:
            if b not in node.children:
                break
            node = node.children[b]
            path.append(node)
        return path

    def match(self, blocks, now):
        path = self._walk(blocks)
        for n in path:
            n.used = now
        return len(path)

    def _leaves(self, keep):
        stack, out = [self.root], []
        while stack:
            n = stack.pop()
            stack.extend(n.children.values())
            if n is not self.root and not n.children and id(n) not in keep:
                out.append(n)
        return out

    def _evict_one(self, keep):
        leaves = self._leaves(keep)
        if not leaves:
            return False
        victim = min(leaves, key=lambda n: (n.used, n.key))
        del victim.parent.children[victim.key]
        self.count -= 1
        return True

    def insert(self, blocks, now):
        path = self._walk(blocks)
        keep = {id(n) for n in path}
        for n in path:
            n.used = now
        node = path[-1] if path else self.root
        evicted = 0
        for b in blocks[len(path):]:
            if self.count >= self.capacity:
                if not self._evict_one(keep):
                    break
                evicted += 1
            child = _Node(b, node)
            child.used = now
            node.children[b] = child
            self.count += 1
            keep.add(id(child))
            node = child
        return evicted

    def size(self):
        return self.count
