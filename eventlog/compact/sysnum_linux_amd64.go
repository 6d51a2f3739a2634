package compact

const sysRenameat2 = 316
