class Node:
    def __init__(self, value, succeeding=None, previous=None):
        pass


class LinkedList:
    def __init__(self):
        pass
