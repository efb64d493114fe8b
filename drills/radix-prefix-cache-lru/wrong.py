class _Node:
    def __init__(self, key, parent):
        self.key, self.parent, self.children, self.used = key, parent, {}, 0.0


class PrefixCache:
    """Evicts the least recently used node, leaf or not: its subtree is stranded (counted, unreachable)."""

    def __init__(self, capacity):
        self.capacity = capacity
        self.root = _Node(None, None)
        self.nodes = []

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

    def insert(self, blocks, now):
        path = self._walk(blocks)
        for n in path:
            n.used = now
        node = path[-1] if path else self.root
        evicted = 0
        for b in blocks[len(path):]:
            if len(self.nodes) >= self.capacity:
                candidates = [n for n in self.nodes if n not in path]
                victim = min(candidates, key=lambda n: (n.used, n.key))
                del victim.parent.children[victim.key]
                self.nodes.remove(victim)
                evicted += 1
            child = _Node(b, node)
            child.used = now
            node.children[b] = child
            self.nodes.append(child)
            path.append(child)
            node = child
        return evicted

    def size(self):
        return len(self.nodes)
