* A small LP exercising every section and bound type of the reader.
NAME          SMALL
OBJSENSE
    MAX
ROWS
 N  PROFIT
 L  CAP
 G  DEMAND
 E  BAL
 E  RNGPOS
 E  RNGNEG
 L  RNGL
 N  FREEROW
COLUMNS
    X1        PROFIT         3.0   CAP            1.0
    X1        DEMAND         1.0   BAL            1.0
    X2        PROFIT         2.0   CAP            2.0
    X2        RNGPOS         1.0   FREEROW        9.0
    MARKER    'MARKER'       'INTORG'
    X3        PROFIT        -1.0   BAL           -1.0
    X3        RNGNEG         1.0
    MARKER    'MARKER'       'INTEND'
    X4        PROFIT         1.0   RNGL           1.0
    X5        PROFIT        -2.0   CAP            1.0
    X6        PROFIT         0.5   DEMAND         1.0
    X7        PROFIT        -1.0   RNGL           1.0
RHS
    RHS       CAP           10.0   DEMAND         2.0
    RHS       BAL            1.0   RNGPOS         1.0
    RHS       RNGNEG         3.0   RNGL           8.0
    RHS       PROFIT        -5.0
RANGES
    RNG       RNGPOS         2.0   RNGNEG        -2.0
    RNG       RNGL           4.0
BOUNDS
 UP BND       X1             4.0
 LO BND       X2            -1.0
 FX BND       X5             0.5
 FR BND       X3
 MI BND       X4
 UP BND       X4             6.0
 PL BND       X6
 BV BND       X7
 UP BND       X6            -1.0
ENDATA
