NAME X
ROWS
 N obj
COLUMNS
 x1 nosuchrow 1
ENDATA
