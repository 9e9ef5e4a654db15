def equilateral(sides):
    pass


def isosceles(sides):
    pass


def scalene(sides):
    pass
