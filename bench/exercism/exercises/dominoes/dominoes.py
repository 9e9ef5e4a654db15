def can_chain(dominoes):
    pass
