package compact

const sysRenameat2 = 276
