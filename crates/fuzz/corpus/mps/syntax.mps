NAME X
ROWS
 N obj
 L c1
COLUMNS
 x1 obj 1 c1
RHS
 rhs c1 1
ENDATA
