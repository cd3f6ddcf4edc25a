/**
 * Word lists for the simulated enterprise registry (value sets from docs/registry.md where it has them).
 * Plain data: the generator in enterprises.ts combines these into records.
 */

/** A county-level division: district, county or county-level city, with its GB/T 2260 code. */
export interface District {
  name: string;
  code: string;
}

/** A prefecture-level city (or a municipality) with the districts the world places firms in. */
export interface City {
  /** Short name used in enterprise names, without 市: 深圳. */
  name: string;
  code: string;
  districts: readonly District[];
}

export interface Province {
  /** GB/T 2260 two-digit code, as PROVINCE carries it. */
  code: number;
  /** Full name: 广东省, 上海市. */
  name: string;
  /** Short name usable as a name prefix: 广东, 上海. */
  short: string;
  municipality: boolean;
  /** Relative share of the world's enterprises. */
  weight: number;
  cities: readonly City[];
}

/** `text` cut at `separator` into `min` to `max` non-empty parts: a slip in a table row throws. */
function cells(text: string, separator: string, min: number, max = min): string[] {
  const parts = text.split(separator);
  if (parts.length < min || parts.length > max || parts.includes(''))
    throw new Error(`malformed vocabulary row: ${text}`);
  return parts;
}

/**
 * One province a row: GB/T 2260 code, name, short name, weight and, for the four municipalities,
 * `municipality`; then, after each ` | `, one of its cities: name, code and its districts as
 * `code:name` pairs (no value holds a space, a colon or a `|`).
 */
const PROVINCE_ROWS: readonly string[] = [
  '11 北京市 北京 9 municipality | 北京 110000 110101:东城区 110102:西城区 110105:朝阳区 110106:丰台区 110107:石景山区 110108:海淀区 110111:房山区 110112:通州区 110113:顺义区 110114:昌平区 110115:大兴区',
  '12 天津市 天津 3 municipality | 天津 120000 120101:和平区 120103:河西区 120104:南开区 120111:西青区 120113:北辰区 120116:滨海新区',
  '13 河北省 河北 3 | 石家庄 130100 130102:长安区 130104:桥西区 130105:新华区 130108:裕华区 | 唐山 130200 130202:路南区 130203:路北区 130281:遵化市 | 保定 130600 130602:竞秀区 130606:莲池区 130681:涿州市',
  '14 山西省 山西 1 | 太原 140100 140105:小店区 140106:迎泽区 140109:万柏林区',
  '15 内蒙古自治区 内蒙古 1 | 呼和浩特 150100 150102:新城区 150105:赛罕区 | 包头 150200 150203:昆都仑区 150207:九原区',
  '21 辽宁省 辽宁 2 | 沈阳 210100 210102:和平区 210104:大东区 210106:铁西区 210112:浑南区 | 大连 210200 210202:中山区 210204:沙河口区 210211:甘井子区',
  '22 吉林省 吉林 1 | 长春 220100 220102:南关区 220104:朝阳区 220106:绿园区',
  '23 黑龙江省 黑龙江 1 | 哈尔滨 230100 230102:道里区 230103:南岗区 230109:松北区',
  '31 上海市 上海 10 municipality | 上海 310000 310101:黄浦区 310104:徐汇区 310105:长宁区 310106:静安区 310107:普陀区 310109:虹口区 310110:杨浦区 310112:闵行区 310113:宝山区 310114:嘉定区 310115:浦东新区 310117:松江区 310118:青浦区 310120:奉贤区 310151:崇明区',
  '32 江苏省 江苏 9 | 南京 320100 320102:玄武区 320104:秦淮区 320105:建邺区 320106:鼓楼区 320115:江宁区 | 无锡 320200 320211:滨湖区 320213:梁溪区 320214:新吴区 320281:江阴市 | 常州 320400 320411:新北区 320412:武进区 | 苏州 320500 320505:虎丘区 320506:吴中区 320507:相城区 320508:姑苏区 320583:昆山市',
  '33 浙江省 浙江 8 | 杭州 330100 330102:上城区 330105:拱墅区 330106:西湖区 330108:滨江区 330109:萧山区 330110:余杭区 | 宁波 330200 330203:海曙区 330206:北仑区 330212:鄞州区 330282:慈溪市 | 温州 330300 330302:鹿城区 330304:瓯海区 330381:瑞安市 | 金华 330700 330702:婺城区 330782:义乌市',
  '34 安徽省 安徽 2 | 合肥 340100 340102:瑶海区 340104:蜀山区 340111:包河区 340124:庐江县',
  '35 福建省 福建 4 | 福州 350100 350102:鼓楼区 350104:仓山区 350111:晋安区 | 厦门 350200 350203:思明区 350205:海沧区 350206:湖里区 350211:集美区 | 泉州 350500 350503:丰泽区 350582:晋江市 350583:南安市',
  '36 江西省 江西 1 | 南昌 360100 360102:东湖区 360111:青山湖区 360113:红谷滩区',
  '37 山东省 山东 6 | 济南 370100 370102:历下区 370103:市中区 370112:历城区 | 青岛 370200 370202:市南区 370203:市北区 370211:黄岛区 370212:崂山区 | 烟台 370600 370602:芝罘区 370613:莱山区 | 潍坊 370700 370702:潍城区 370783:寿光市 | 泰安 370900 370902:泰山区 370911:岱岳区',
  '41 河南省 河南 3 | 郑州 410100 410102:中原区 410103:二七区 410104:管城回族区 410105:金水区',
  '42 湖北省 湖北 3 | 武汉 420100 420102:江岸区 420103:江汉区 420106:武昌区 420111:洪山区 420115:江夏区',
  '43 湖南省 湖南 2 | 长沙 430100 430102:芙蓉区 430103:天心区 430104:岳麓区 430105:开福区 430111:雨花区',
  '44 广东省 广东 12 | 广州 440100 440103:荔湾区 440104:越秀区 440105:海珠区 440106:天河区 440111:白云区 440112:黄埔区 440113:番禺区 | 深圳 440300 440303:罗湖区 440304:福田区 440305:南山区 440306:宝安区 440307:龙岗区 440309:龙华区 | 珠海 440400 440402:香洲区 440403:斗门区 | 佛山 440600 440604:禅城区 440605:南海区 440606:顺德区 | 东莞 441900 441900:东莞市',
  '45 广西壮族自治区 广西 1 | 南宁 450100 450102:兴宁区 450103:青秀区 450107:西乡塘区',
  '46 海南省 海南 1 | 海口 460100 460105:秀英区 460106:龙华区 460108:美兰区',
  '50 重庆市 重庆 3 municipality | 重庆 500000 500103:渝中区 500105:江北区 500106:沙坪坝区 500107:九龙坡区 500108:南岸区 500112:渝北区',
  '51 四川省 四川 4 | 成都 510100 510104:锦江区 510105:青羊区 510106:金牛区 510107:武侯区 510108:成华区 510116:双流区 | 绵阳 510700 510703:涪城区 510704:游仙区',
  '52 贵州省 贵州 1 | 贵阳 520100 520102:南明区 520103:云岩区 520115:观山湖区',
  '53 云南省 云南 1 | 昆明 530100 530102:五华区 530103:盘龙区 530111:官渡区',
  '54 西藏自治区 西藏 0.2 | 拉萨 540100 540102:城关区 540103:堆龙德庆区',
  '61 陕西省 陕西 2 | 西安 610100 610102:新城区 610103:碑林区 610104:莲湖区 610112:未央区 610113:雁塔区',
  '62 甘肃省 甘肃 0.5 | 兰州 620100 620102:城关区 620103:七里河区',
  '63 青海省 青海 0.2 | 西宁 630100 630102:城东区 630104:城西区',
  '64 宁夏回族自治区 宁夏 0.3 | 银川 640100 640104:兴庆区 640106:金凤区',
  '65 新疆维吾尔自治区 新疆 0.6 | 乌鲁木齐 650100 650102:天山区 650104:新市区 650105:水磨沟区',
];

function province(row: string): Province {
  const [head = '', ...cities] = cells(row, ' | ', 2, Number.POSITIVE_INFINITY);
  const [code, name = '', short = '', weight, kind] = cells(head, ' ', 4, 5);
  if (kind !== undefined && kind !== 'municipality') throw new Error(`malformed vocabulary row: ${row}`);
  return {
    code: Number(code),
    name,
    short,
    municipality: kind === 'municipality',
    weight: Number(weight),
    cities: cities.map(city),
  };
}

function city(text: string): City {
  const [name = '', code = '', ...districts] = cells(text, ' ', 3, Number.POSITIVE_INFINITY);
  return { name, code, districts: districts.map(district) };
}

function district(pair: string): District {
  const [code = '', name = ''] = cells(pair, ':', 2);
  return { code, name };
}

export const PROVINCES: readonly Province[] = PROVINCE_ROWS.map(province);

/** Common surnames, most frequent first (the generator weights the head of the list). */
export const SURNAMES: readonly string[] = [
  ...'王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤',
  '欧阳',
  '司马',
  '上官',
  '诸葛',
];

/** Characters used in given names (one or two of them). */
export const GIVEN_CHARS: readonly string[] = [
  ...'伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平刚桂英华玉兰萍红鹏辉建国志文斌宇浩凯晨欣怡婷雪琳博航帆彬晓东海波宁峰亮健鑫颖佳倩瑶嘉子轩梓涵一诺雨泽俊豪振宏德荣春梅丹凤云龙飞思源清远安琪婉瑜立新永福世昌金成',
];

/** Names for 外籍自然人 shareholders and foreign-invested firms' officers. */
export const FOREIGN_PERSONS: readonly string[] = [
  'JOHN SMITH',
  'DAVID LEE',
  'MICHAEL BROWN',
  'TANAKA HIROSHI',
  'KIM MIN-JUN',
  'PETER MUELLER',
  'ANNA SCHMIDT',
  'ROBERT CHAN',
  'SATO YUKI',
  'JEAN DUPONT',
  'LIM WEI MING',
  'MARIA GARCIA',
];

/** Two-character trade names (字号). */
export const TRADE_WORDS: readonly string[] = [
  ...'星辰 华拓 恒通 鼎盛 瑞丰 宏图 金桥 蓝海 天诚 博远 汇智 中科 凯达 新元 万邦 腾跃 嘉禾 远航 聚力 启明 云帆 鸿运 信达 卓越 和信 正泰 安康 永泰 北辰 东方 南风 海纳 锐博 睿智 天成 金源 汇聚 晨光 华誉 润泽 盛世 德胜 同创 精工 科瑞 合众 通达 兴业 宏达 明泰 泰和 康宁 三才 九洲 四海 百川 千禧 万象 亿达 华信 华夏 神州 中联 泛亚 环宇 未来 智远 思源 致远 鼎新 创维 易联 优讯 捷顺 迅驰 飞扬 翔宇 腾龙 祥瑞 福泰 吉祥 长城 长江 黄河 泰山 昆仑 天元 乾坤 坤元 乾元 晟达 昊天 灏瀚 森源 林海 青松 翠竹 绿源 丰收 金穗 银河 星河 宇宙 极光 光明 曙光 朝阳 旭日 红日 蓝天 白云 清泉 碧水 金石 玉龙 凤凰 麒麟 雄鹰 骏马 鲲鹏 鹏程 宏远 远大 伟业 创业 立信 诚信 守正 务实 求是 格致 知行 明德 厚德 载物 博雅 尚品 优品 佳品 精诚 至诚 同心 齐力 联创 共赢 众合 汇丰 恒丰 利丰 隆鑫 鑫源 金鑫 顺发 永兴 兴旺 旺达 达安 安信 信和 和泰 泰安 安泰 康泰 健峰 峰岚 岚山 山海 海川 川源 源泉 泉通 通和 和美 美嘉 嘉信 信诺 诺亚 亚信 天宇 宇辰 辰星 星耀 耀华 华晟 晟和 和润 润达 达瑞 瑞合 合力 力拓 拓维 维新 新锐 锐意 意达 达美 美创 创想 想象 象元 元通 通宝 宝德 德尔 尔康 康达 达成 成功'.split(
    ' ',
  ),
];

/** Single characters that extend a trade name when two-character ones are taken. */
export const TRADE_CHARS: readonly string[] = [
  ...'华瑞恒通盛达宏信泰丰源鑫鼎诚兴昌隆博睿智远航星辰云海天成新中科创',
];

/** Transliteration-like brand names of foreign-invested firms. */
export const FOREIGN_BRANDS: readonly string[] = [
  ...'艾德蒙 博朗特 凯斯达 欧联 维斯塔 泰科森 莱茵 阿尔法 贝塔斯 德迈 施特劳 霍夫曼 卡尔森 诺德 索菲亚 佳能达 美卓 安迈 利丰行 太古达'.split(
    ' ',
  ),
];

/** An industry subclass: GB/T 4754 section, class, subclass, and the words that go with it. */
export interface Industry {
  section: string;
  /** Two-digit class code. */
  bigCode: string;
  big: string;
  middle: string;
  /** Words naming the industry inside an enterprise name: 信息科技, 贸易. */
  words: readonly string[];
  /** Business-scope phrases typical of the industry. */
  scope: readonly string[];
  weight: number;
}

/**
 * One industry a row: section, class code, class, subclass and weight; then, after ` | `, its
 * words; then, after ` | `, its scope phrases (no value holds a space or a `|`).
 */
const INDUSTRY_ROWS: readonly string[] = [
  'A 01 农业 蔬菜种植 2 | 农业科技 农业发展 生态农业 蔬菜种植 果蔬 | 蔬菜种植 水果种植 食用农产品初加工 农业机械服务 农业专业及辅助性活动',
  'A 01 农业 茶叶种植 0.4 | 茶叶 茶业 | 茶叶种植 茶叶制品生产 茶具销售 食用农产品初加工',
  'A 01 农业 花卉种植 0.4 | 花卉苗木 园艺 | 花卉种植 林木种子生产经营 草种植 园林绿化工程施工',
  'A 01 农业 中药材种植 0.3 | 中药材种植 中药材 | 中草药种植 中草药收购 地产中草药（不含中药饮片）购销',
  'A 01 农业 食用菌种植 0.3 | 食用菌 | 食用菌种植 食用农产品初加工 食用农产品批发',
  'A 03 畜牧业 牲畜饲养 1 | 畜牧 养殖 牧业 | 牲畜饲养 家禽饲养 饲料原料销售 畜牧专业及辅助性活动',
  'A 05 农、林、牧、渔专业及辅助性活动 农业机械活动 0.3 | 农机服务 农业服务 | 农业机械服务 农作物病虫害防治服务 农业生产托管服务 农业机械销售',
  'B 06 煤炭开采和洗选业 烟煤和无烟煤开采洗选 0.5 | 矿业 能源 | 煤炭开采 煤炭洗选 煤炭及制品销售 矿山机械销售',
  'C 39 计算机、通信和其他电子设备制造业 通信设备制造 4 | 电子 电子科技 通信设备 光电科技 | 电子元器件制造 电子产品销售 通信设备制造 计算机软硬件及外围设备制造 货物进出口',
  'C 34 通用设备制造业 泵及真空设备制造 3 | 机械 机电设备 精密机械 机械设备 | 通用设备制造（不含特种设备制造） 机械零件、零部件加工 机械设备销售 五金产品制造',
  'C 26 化学原料和化学制品制造业 涂料制造 2 | 化工 新材料 化学 | 化工产品生产（不含许可类化工产品） 涂料制造（不含危险化学品） 新材料技术研发 合成材料销售',
  'C 18 纺织服装、服饰业 机织服装制造 2 | 服饰 服装 制衣 | 服装制造 服饰制造 服装服饰批发 针纺织品销售',
  'C 14 食品制造业 糕点、面包制造 2 | 食品 食品科技 | 食品生产 食品销售 农副产品销售 食品添加剂销售',
  'C 27 医药制造业 化学药品制剂制造 2 | 医药 生物医药 药业 制药 | 药品生产 药品批发 医学研究和试验发展 第一类医疗器械销售 技术进出口',
  'C 36 汽车制造业 汽车零部件及配件制造 2 | 汽车零部件 汽车配件 汽车部件 | 汽车零部件及配件制造 汽车零配件批发 模具制造 金属表面处理及热处理加工',
  'D 44 电力、热力生产和供应业 太阳能发电 2 | 新能源 电力 光伏科技 能源科技 | 太阳能发电技术服务 储能技术服务 新能源原动设备销售 合同能源管理 发电业务、输电业务、供（配）电业务',
  'E 47 房屋建筑业 住宅房屋建筑 4 | 建设工程 建筑工程 建设 建工 | 建设工程施工 建筑劳务分包 建筑材料销售 土石方工程施工 园林绿化工程施工',
  'E 50 建筑装饰、装修和其他建筑业 建筑装饰和装修业 3 | 装饰工程 装饰设计 建筑装饰 | 住宅室内装饰装修 建筑装饰材料销售 家具安装和维修服务 专业设计服务',
  'F 51 批发业 其他机械设备及电子产品批发 10 | 贸易 商贸 国际贸易 供应链管理 进出口 | 货物进出口 技术进出口 五金产品批发 电子产品销售 日用百货销售 化工产品销售（不含许可类化工产品）',
  'F 52 零售业 百货零售 5 | 商业 百货 超市 商业管理 | 日用百货销售 食品销售 服装服饰零售 化妆品零售 互联网销售（除销售需要许可的商品）',
  'G 54 道路运输业 普通货物道路运输 3 | 物流 运输 货运 | 道路货物运输（不含危险货物） 国内货物运输代理 装卸搬运 国际货物运输代理',
  'G 59 装卸搬运和仓储业 通用仓储 2 | 仓储 供应链 物流科技 | 普通货物仓储服务（不含危险化学品等需许可审批的项目） 供应链管理服务 装卸搬运 包装服务',
  'H 61 住宿业 经济型连锁酒店 1.5 | 酒店管理 酒店 | 住宿服务 酒店管理 餐饮服务 会议及展览服务',
  'H 62 餐饮业 正餐服务 3 | 餐饮管理 餐饮 饮食 | 餐饮服务 餐饮管理 食品销售 外卖递送服务',
  'I 65 软件和信息技术服务业 软件开发 10 | 信息科技 软件 信息技术 数据科技 智能科技 网络科技 | 软件开发 信息系统集成服务 数据处理和存储支持服务 信息技术咨询服务 人工智能应用软件开发 计算机系统服务',
  'I 64 互联网和相关服务 互联网信息服务 4 | 网络 互联网科技 数字科技 | 互联网信息服务 互联网数据服务 网络技术服务 第二类增值电信业务 广告设计、代理',
  'J 67 资本市场服务 创业投资基金 3 | 投资 投资管理 资产管理 股权投资 创业投资 | 以自有资金从事投资活动 股权投资 投资管理 资产管理 财务咨询',
  'J 69 其他金融业 融资租赁服务 1 | 融资租赁 商业保理 | 融资租赁业务 租赁业务 向国内外购买租赁财产 商业保理业务',
  'K 70 房地产业 房地产开发经营 4 | 房地产开发 置业 物业管理 不动产 | 房地产开发经营 物业管理 非居住房地产租赁 房地产经纪 停车场服务',
  'L 72 商务服务业 企业管理咨询 9 | 企业管理 企业管理咨询 商务咨询 文化传媒 广告 实业 | 企业管理咨询 市场营销策划 会议及展览服务 广告设计、代理 信息咨询服务（不含许可类信息咨询服务）',
  'L 71 租赁业 机械设备经营租赁 1.5 | 设备租赁 租赁 | 机械设备租赁 建筑工程机械与设备租赁 办公设备租赁服务 运输设备租赁服务',
  'M 73 研究和试验发展 工程和技术研究和试验发展 6 | 生物科技 科技 技术研究 新材料科技 | 工程和技术研究和试验发展 生物基材料技术研发 新材料技术研发 技术进出口',
  'M 74 专业技术服务业 工程管理服务 3 | 工程咨询 检测技术 规划设计 工程技术 | 工程管理服务 工程造价咨询业务 检验检测服务 规划设计管理 工程技术服务（规划管理、勘察、设计、监理除外）',
  'N 77 生态保护和环境治理业 水污染治理 2 | 环保科技 环境工程 环境科技 | 水污染治理 大气污染治理 固体废物治理 环保咨询服务 土壤污染治理与修复服务',
  'O 80 居民服务业 家庭服务 1.5 | 家政服务 保洁服务 生活服务 | 家政服务 专业保洁、清洗、消毒服务 洗染服务 养老服务',
  'O 81 机动车、电子产品和日用产品修理业 汽车修理与维护 1 | 汽车服务 汽车维修 | 机动车修理和维护 汽车零配件零售 洗车服务 二手车经纪',
  'P 83 教育 职业技能培训 2 | 教育科技 教育咨询 培训 | 教育咨询服务（不含涉许可审批的教育培训活动） 组织文化艺术交流活动 业务培训（不含教育培训、职业技能培训等需取得许可的培训） 软件开发',
  'Q 84 卫生 门诊部（所） 2 | 医疗科技 医疗管理 健康管理 医疗器械 | 医疗服务 健康咨询服务（不含诊疗服务） 第二类医疗器械销售 医院管理',
  'R 87 广播、电视、电影和录音制作业 影视节目制作 2 | 影视文化 文化传播 传媒 | 广播电视节目制作经营 电影发行 组织文化艺术交流活动 数字内容制作服务（不含出版发行）',
  'R 89 体育 健身休闲活动 1 | 体育文化 健身 体育发展 | 体育赛事策划 健身休闲活动 体育用品及器材零售 体育场地设施经营（不含高危险性体育运动）',
  'S 95 群众团体、社会团体和其他成员组织 行业性团体 0.2 | 会务服务 公共服务 | 会议及展览服务 社会经济咨询服务 组织文化艺术交流活动',
  'T 96 国际组织 国际组织 0.1 | 国际交流 国际合作 | 国际经济、科技、环保、物流信息咨询服务 翻译服务 会议及展览服务',
];

function industry(row: string): Industry {
  const [head = '', words = '', scope = ''] = cells(row, ' | ', 3);
  const [section = '', bigCode = '', big = '', middle = '', weight] = cells(head, ' ', 5);
  return {
    section,
    bigCode,
    big,
    middle,
    words: cells(words, ' ', 1, Number.POSITIVE_INFINITY),
    scope: cells(scope, ' ', 1, Number.POSITIVE_INFINITY),
    weight: Number(weight),
  };
}

export const INDUSTRIES: readonly Industry[] = INDUSTRY_ROWS.map(industry);

/** Scope phrases any enterprise may carry. */
export const GENERAL_SCOPE: readonly string[] = [
  '技术服务、技术开发、技术咨询、技术交流、技术转让、技术推广',
  '企业管理咨询',
  '货物进出口',
  '技术进出口',
  '会议及展览服务',
  '办公用品销售',
  '计算机软硬件及辅助设备零售',
  '信息咨询服务（不含许可类信息咨询服务）',
];

/** Closing sentence of a modern scope's general items. */
export const SCOPE_GENERAL_TAIL = '（除依法须经批准的项目外，凭营业执照依法自主开展经营活动）';
/** Closing sentence of an older scope. */
export const SCOPE_APPROVAL_TAIL = '【依法须经批准的项目，经相关部门批准后方可开展经营活动】';

/** Enterprise type code → type text (docs/registry.md codes, texts as the registry writes them). */
export const ENT_TYPE_TEXT: Readonly<Record<string, string>> = {
  '1100': '有限责任公司',
  '1110': '有限责任公司(国有独资)',
  '1130': '有限责任公司(自然人投资或控股)',
  '1140': '有限责任公司(国有控股)',
  '1151': '有限责任公司(自然人独资)',
  '1152': '有限责任公司(自然人投资或控股的法人独资)',
  '1153': '有限责任公司(非自然人投资或控股的法人独资)',
  '1190': '其他有限责任公司',
  '1212': '股份有限公司(上市、自然人投资或控股)',
  '1222': '股份有限公司(非上市、自然人投资或控股)',
  '2130': '有限责任公司分公司(自然人投资或控股)',
  '2190': '其他有限责任公司分公司',
  '2222': '股份有限公司分公司(非上市、自然人投资或控股)',
  '3200': '集体所有制',
  '4531': '普通合伙企业',
  '4533': '有限合伙企业',
  '4540': '个人独资企业',
  '5110': '有限责任公司(中外合资)',
  '5150': '有限责任公司(外国法人独资)',
  '6110': '有限责任公司(台港澳与境内合资)',
  '6150': '有限责任公司(台港澳法人独资)',
  '9100': '农民专业合作社',
};

/** Relative frequency of each type code in a new world. */
export const ENT_TYPE_WEIGHTS: readonly (readonly [string, number])[] = [
  ['1130', 30],
  ['1151', 18],
  ['1190', 10],
  ['1100', 3],
  ['1152', 3],
  ['1153', 2],
  ['1110', 0.7],
  ['1140', 0.8],
  ['1222', 7],
  ['1212', 1.8],
  ['2130', 3],
  ['2190', 2],
  ['2222', 1],
  ['3200', 0.5],
  ['4531', 1],
  ['4533', 3],
  ['4540', 1],
  ['5110', 1.2],
  ['5150', 1.5],
  ['6110', 0.5],
  ['6150', 0.7],
  ['9100', 2],
];

/** Statuses of live enterprises, with weights for a new world. */
export const ACTIVE_STATUSES: readonly (readonly [string, number])[] = [
  ['存续', 35],
  ['在业', 20],
  ['存续（在营、开业、在册）', 15],
  ['开业', 8],
  ['在营（开业）企业', 3],
  ['迁入', 0.5],
];

/** Statuses monitoring treats as bad (plus 迁出), with weights for a new world. */
export const INACTIVE_STATUSES: readonly (readonly [string, number])[] = [
  ['注销', 6],
  ['吊销，未注销', 3],
  ['吊销，已注销', 1],
  ['清算', 1.2],
  ['迁出', 0.8],
  ['停业', 0.6],
  ['撤销', 0.4],
];

export const REVOKE_REASONS: readonly string[] = [
  '未按规定接受年度检验',
  '连续六个月以上未开展经营活动',
  '成立后无正当理由超过六个月未开业',
  '未依照《企业信息公示暂行条例》规定公示年度报告',
  '通过登记的住所或者经营场所无法联系',
  '被列入经营异常名录届满3年仍未履行相关义务',
];

export const CANCEL_REASONS: readonly string[] = ['提交虚假材料取得公司登记', '以欺诈手段取得公司登记'];

/** Positions of key personnel (docs/registry.md). */
export const POSITIONS: readonly string[] = '执行董事 监事 经理 董事长 董事 总经理 执行董事兼总经理'.split(
  ' ',
);
/** Positions of a farmers' cooperative's officers. */
export const COOPERATIVE_POSITIONS: readonly string[] = ['理事长', '理事', '监事'];
/** The person in charge of a branch. */
export const BRANCH_HEAD = '负责人';
/** The partner who runs a partnership. */
export const MANAGING_PARTNER = '执行事务合伙人';
/** The owner of a sole proprietorship. */
export const SOLE_INVESTOR = '投资人';

export const NATURAL_SHAREHOLDER_TYPES: readonly string[] =
  '自然人股东 非农民自然人 农民自然人 外籍自然人 华侨'.split(' ');
/** Shareholder types that carry the PID of an enterprise of the world. */
export const ENTERPRISE_SHAREHOLDER_TYPES: readonly string[] = ['企业法人', '合伙企业', '其他投资者'];
/** Shareholder type of enterprises outside mainland China: not in the world, so no PID. */
export const FOREIGN_ENTERPRISE_TYPE = '外国(地区)企业';
/** Shareholder types of organisations that are not enterprises (no PID). */
export const ORGANISATION_SHAREHOLDER_TYPES: readonly string[] = ['事业法人', '社团法人', '机关法人'];

/** Organisations that hold shares without being enterprises of the world (a place name goes first). */
export const ORGANISATION_SHAREHOLDERS: readonly (readonly [string, string])[] = [
  ['国有资产监督管理委员会', '机关法人'],
  ['财政局', '机关法人'],
  ['科学技术协会', '社团法人'],
  ['工商业联合会', '社团法人'],
  ['大学', '事业法人'],
  ['科学研究院', '事业法人'],
];

/** Stems and legal forms of enterprises registered abroad (外国(地区)企业 shareholders). */
export const FOREIGN_COMPANY_STEMS: readonly string[] = [
  ...'ALPHA APEX ORIENT PACIFIC NORDIC SUMMIT VERTEX HARBOUR GLOBAL UNITED SILVERLINE BLUEWATER EVEREST MERIDIAN'.split(
    ' ',
  ),
];
export const FOREIGN_COMPANY_WORDS: readonly string[] = ['TECH', 'INDUSTRIES', 'TRADING', 'CAPITAL', 'GROUP'];
export const FOREIGN_COMPANY_FORMS: readonly string[] = [
  'HOLDINGS LIMITED',
  'INTERNATIONAL LIMITED',
  'CO., LTD.',
  'GMBH',
  'INC.',
  'PTE. LTD.',
  'B.V.',
];
/** Forms of Hong Kong, Macao and Taiwan enterprises written in Chinese, after a trade name. */
export const HMT_COMPANY_FORMS: readonly string[] = [
  '国际（香港）有限公司',
  '控股（香港）有限公司',
  '投资（香港）有限公司',
  '实业（澳门）有限公司',
  '国际股份有限公司（台湾）',
];

export const CAPITAL_AMOUNTS: readonly number[] = [
  1, 3, 5, 10, 10, 30, 50, 50, 100, 100, 100, 200, 200, 300, 500, 500, 500, 800, 1000, 1000, 1000, 2000, 3000,
  5000, 5000, 10000, 20000, 50000,
];

/** REGCAPCUR of domestic enterprises, weighted. */
export const DOMESTIC_CAPITAL_UNITS: readonly (readonly [string, number])[] = [
  ['万人民币', 70],
  ['万元人民币', 20],
  ['万(元)', 10],
];
/** REGCAPCUR of foreign-invested enterprises, weighted. */
export const FOREIGN_CAPITAL_UNITS: readonly (readonly [string, number])[] = [
  ['万美元', 60],
  ['万港元', 20],
  ['万人民币', 20],
];

export const ROADS: readonly string[] = [
  ...'人民路 中山路 解放路 建设路 长江路 黄河路 科技路 创业路 高新大道 工业园路 世纪大道 新华路 和平路 文化路 学府路 发展大道 金融街 滨江大道 迎宾大道 东风路 胜利路 光明路 幸福路 振兴路 华山路 泰山路 天府大道 科苑路 张江路 中关村大街 深南大道 复兴路 延安路 淮海路 南京路'.split(
    ' ',
  ),
];

export const BUILDINGS: readonly string[] = [
  ...'创业大厦 科技园 国际中心 金融中心 商务大厦 产业园 孵化器 广场 写字楼 总部基地 软件园 创意园'.split(' '),
];

/**
 * Words of a cooperative's name before 专业合作社 (each is a word of a section-A industry) and
 * what its members produce, for the scope.
 */
export const COOPERATIVE_WORDS: readonly { word: string; product: string }[] = [
  { word: '蔬菜种植', product: '蔬菜' },
  { word: '果蔬', product: '果蔬' },
  { word: '养殖', product: '畜禽' },
  { word: '茶叶', product: '茶叶' },
  { word: '农机服务', product: '农产品' },
  { word: '花卉苗木', product: '花卉苗木' },
  { word: '中药材种植', product: '中药材' },
  { word: '食用菌', product: '食用菌' },
];

/** Words of a partnership's name before 合伙企业 or 中心 (each is a word of an industry). */
export const PARTNERSHIP_WORDS: readonly string[] = [
  '投资管理',
  '企业管理咨询',
  '股权投资',
  '创业投资',
  '投资',
  '企业管理',
];

/** Names of a sole proprietorship end with one of these instead of a company form. */
export const SOLE_FORMS: readonly string[] = ['中心', '商行', '工作室', '经营部'];
